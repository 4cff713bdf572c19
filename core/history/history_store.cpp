#include "history_store.h"

#include "history_writer.h"

namespace tg {

std::unique_ptr<HistoryStore> HistoryStore::open(const std::string& path, HistoryOptions opts, std::string* error) {
  auto writer = std::make_unique<HistoryWriter>(path, std::move(opts));
  try {
    writer->open();
  } catch (const sql::Error& e) {
    if (error) *error = e.what();
    return nullptr;
  }
  return std::unique_ptr<HistoryStore>(new HistoryStore(std::move(writer)));
}

HistoryStore::HistoryStore(std::unique_ptr<HistoryWriter> writer) : d_(std::move(writer)) {}
HistoryStore::~HistoryStore() = default;

void HistoryStore::append(std::vector<Sample> samples) { d_->append(std::move(samples)); }
void HistoryStore::append(Event event) { d_->append(std::move(event)); }
void HistoryStore::append(AttemptRecord attempt) { d_->append(std::move(attempt)); }

bool HistoryStore::flush() { return d_->flush().get(); }
bool HistoryStore::runRetention(EpochMs nowMs) { return d_->runRetention(nowMs).get(); }
bool HistoryStore::detectIncidents() { return d_->detectIncidents().get(); }
// Not waited for: an operator's new cap takes effect with the writer's next step.
void HistoryStore::setMaxFileBytes(std::uint64_t bytes) { d_->setMaxFileBytes(bytes); }

HistoryStatus HistoryStore::status() const { return d_->status(); }
const std::string& HistoryStore::path() const { return d_->path(); }

}  // namespace tg
