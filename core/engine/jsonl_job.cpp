#include "jsonl_job.h"

#include "json_text.h"
#include "log.h"
#include "secret.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace tg {
namespace {

// Far above any model's output limit, far below INT_MAX: a larger max_tokens is a mistake, and letting it
// through would overflow the token reservation.
constexpr long long kMaxJobTokens = 100'000'000;
// A request may wait at most a week for its first send (the longest tier max_wait_s); longer overflows the
// engine's clock arithmetic.
constexpr double kMaxJobDeadlineS = 7 * 86400.0;
// A group's answer rate is counted over this long (capFor).
constexpr auto kRateWindow = std::chrono::seconds(10);
// Of a tier's max_wait_s, the queue wait the feeder aims at (capFor).
constexpr double kQueueWaitShare = 0.5;

// Outside bytes kept exactly: as text when they are UTF-8, else base64 under `<field>_base64`.
void putBytes(nlohmann::json& j, const std::string& field, const std::string& bytes) {
  if (isValidUtf8(bytes)) j[field] = bytes;
  else j[field + "_base64"] = base64Encode(SecretRegistry::redact(bytes));
}

bool isRegularFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Cuts a torn last line (no trailing newline) left by a killed process, so appends start clean.
void cutTornTail(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st {};
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    off_t end = st.st_size;
    char c = 0;
    off_t pos = end;
    while (pos > 0) {
      if (pread(fd, &c, 1, pos - 1) != 1) break;
      if (c == '\n') break;
      --pos;
    }
    if (pos != end) {
      logWarn("job", path + ": dropping a torn last line (" + std::to_string(end - pos) + " bytes)");
      if (ftruncate(fd, pos) != 0) logError("job", path + ": cannot truncate: " + std::strerror(errno));
    }
  }
  ::close(fd);
}

}  // namespace

std::optional<Request> parseJobLine(const std::string& line, std::string* error) {
  JsonParse parsed = parseJsonText(line, kMaxJsonDepth, JsonKeys::Unique);
  if (!parsed.ok()) {
    *error = "not valid JSON: " + parsed.error;
    return std::nullopt;
  }
  const nlohmann::json& j = parsed.value;
  if (!j.is_object()) {
    *error = "expected a JSON object";
    return std::nullopt;
  }
  static const std::unordered_set<std::string> kKnown{"id", "group", "tier", "method", "url",
                                                       "headers", "body", "max_tokens", "deadline"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!kKnown.count(it.key())) {
      *error = "unknown field \"" + it.key() + "\"";
      return std::nullopt;
    }
  }
  Request r;
  auto id = j.find("id");
  if (id == j.end() || !(id->is_string() || id->is_number_integer())) {
    *error = "\"id\": expected a string or integer";
    return std::nullopt;
  }
  r.id = id->is_string() ? id->get<std::string>()
         : id->is_number_unsigned() ? std::to_string(id->get<unsigned long long>())
                                    : std::to_string(id->get<long long>());
  if (r.id.empty()) {
    *error = "\"id\": must not be empty";
    return std::nullopt;
  }
  auto str = [&](const char* k, std::string& out, bool required) {
    auto it = j.find(k);
    if (it == j.end()) {
      if (required) *error = std::string("\"") + k + "\": required string is missing";
      return !required;
    }
    if (!it->is_string()) {
      *error = std::string("\"") + k + "\": expected a string";
      return false;
    }
    out = it->get<std::string>();
    return true;
  };
  std::string tier = "P1";
  if (!str("group", r.group, true) || !str("url", r.url, true) || !str("method", r.method, false) ||
      !str("tier", tier, false))
    return std::nullopt;
  auto t = parseTier(tier);
  if (!t) {
    *error = "\"tier\": expected P0, P1 or P2, got \"" + tier + "\"";
    return std::nullopt;
  }
  r.tier = *t;
  if (r.url.empty() || (r.url[0] != '/' && r.url.rfind("http://", 0) != 0 && r.url.rfind("https://", 0) != 0)) {
    *error = "\"url\": expected a path starting with / or an http(s) URL";
    return std::nullopt;
  }
  if (auto h = j.find("headers"); h != j.end()) {
    if (!h->is_object()) {
      *error = "\"headers\": expected an object of strings";
      return std::nullopt;
    }
    for (auto it = h->begin(); it != h->end(); ++it) {
      if (!it->is_string()) {
        *error = "\"headers\"/\"" + it.key() + "\": expected a string";
        return std::nullopt;
      }
      // Header names and values go onto the wire as given: a CR or LF would start a header of its own.
      if (it.key().empty() || hasControlBytes(it.key(), true) || hasControlBytes(it->get<std::string>(), true)) {
        *error = "\"headers\"/\"" + it.key() + "\": expected a header name and value without control characters";
        return std::nullopt;
      }
      r.headers.emplace_back(it.key(), it->get<std::string>());
    }
  }
  if (auto b = j.find("body"); b != j.end()) r.body = b->is_string() ? b->get<std::string>() : dumpJson(*b);
  if (auto m = j.find("max_tokens"); m != j.end()) {
    // Unsigned first: above INT64_MAX nlohmann keeps the value unsigned, and a signed read would wrap.
    const bool inRange = m->is_number_unsigned() ? m->get<unsigned long long>() <= kMaxJobTokens
                         : m->is_number_integer() ? m->get<long long>() >= 0 && m->get<long long>() <= kMaxJobTokens
                                                  : false;
    if (!inRange) {
      *error = "\"max_tokens\": expected an integer in [0, " + std::to_string(kMaxJobTokens) + "], got " + dumpJson(*m);
      return std::nullopt;
    }
    r.maxTokens = m->get<int>();
  } else if (auto b = j.find("body"); b != j.end() && b->is_object()) {
    // The body's own output limit (OpenAI's max_tokens or max_completion_tokens, the Responses API's
    // max_output_tokens), so the token reservation and a --max-tpm ceiling see the request's size: without it a
    // 500-token request was reserved as its ~30 bytes of body.
    for (const char* k : {"max_tokens", "max_completion_tokens", "max_output_tokens"}) {
      auto m = b->find(k);
      if (m != b->end() && m->is_number_unsigned() && m->get<unsigned long long>() <= kMaxJobTokens) {
        r.maxTokens = m->get<int>();
        break;
      }
    }
  }
  if (auto d = j.find("deadline"); d != j.end()) {
    const double v = d->is_number() ? d->get<double>() : 0;
    if (!d->is_number() || !std::isfinite(v) || v <= 0 || v > kMaxJobDeadlineS) {
      *error = "\"deadline\": expected a positive number of seconds, at most " +
               std::to_string(static_cast<long long>(kMaxJobDeadlineS)) + ", got " + dumpJson(*d);
      return std::nullopt;
    }
    r.deadlineS = v;
  }
  return r;
}

std::string rejectLine(std::int64_t lineNo, const std::string& error, const std::string& line) {
  nlohmann::json reject{{"line", lineNo}, {"error", error}};
  putBytes(reject, "raw", line);
  return SecretRegistry::dumpRedacted(reject);
}

nlohmann::json resultToJson(const Result& r) {
  nlohmann::json j{{"id", r.id},
                   {"group", r.group},
                   {"tier", tierName(r.tier)},
                   {"status", r.status},
                   {"ok", r.ok()},
                   {"attempts", r.attempts},
                   {"latency_ms", std::round(r.latencyMs * 10) / 10},
                   {"wait_ms", std::round(r.waitMs * 10) / 10},
                   {"total_ms", std::round(r.totalMs * 10) / 10},
                   {"tokens", r.tokensUsed}};
  if (r.ok()) {
    // JSON when it parses (within kMaxJsonDepth), else the text, else the exact bytes in base64.
    JsonParse body = parseJsonText(r.body);
    if (body.ok()) j["body"] = std::move(body.value);
    else putBytes(j, "body", r.body);
  } else {
    j["error"] = errorKindName(r.error);
    j["message"] = toValidUtf8(r.errorMessage);
  }
  return j;
}

bool worthRetrying(const nlohmann::json& row) {
  // By type, not value(): an "ok" of another type (a row edited by hand) threw.
  if (fieldBool(row, "ok", true)) return false;
  const std::string kind = fieldString(row, "error");
  if (kind == "http") {
    const double status = fieldNumber(row, "status", 0);
    return status == 408 || status >= 500;
  }
  return kind == "shed" || kind == "circuit_open" || kind == "rate_limited" || kind == "quota_exhausted" ||
         kind == "network" || kind == "timeout";
}

JsonlJob::JsonlJob(Engine& engine, Options opts)
    : engine_(engine), opts_(std::move(opts)), resultsGiven_(!opts_.results.empty()),
      rejectsGiven_(!opts_.rejects.empty()) {
  if (opts_.results.empty()) opts_.results = opts_.input + ".results.jsonl";
  if (opts_.rejects.empty()) opts_.rejects = opts_.input + ".rejects.jsonl";
  s_->observer = opts_.observer;
  for (std::size_t t = 0; t < tierCap_.size(); ++t)
    tierCap_[t] =
        std::max<std::int64_t>(1, std::min<std::int64_t>(opts_.maxOutstanding, engine_.config().tiers[t].capacity));
}

JsonlJob::~JsonlJob() {
  cancel();
  if (feeder_.joinable()) feeder_.join();
  // Requests still in the engine hold s_: their results are written when they come, then the files close.
}

void JsonlJob::start() {
  struct stat in {};
  if (::stat(opts_.input.c_str(), &in) != 0)
    throw std::runtime_error(opts_.input + ": cannot open the job file: " + std::strerror(errno));
  if (S_ISDIR(in.st_mode)) throw std::invalid_argument(opts_.input + ": is a directory, not a job file");
  // Nothing can be written next to a pipe (/dev/stdin.rejects.jsonl: refused, or into /dev as root).
  if (!S_ISREG(in.st_mode)) {
    if (!resultsGiven_)
      throw std::invalid_argument(opts_.input + ": a job that is not a file (a pipe) needs --results FILE");
    struct stat out {};
    if (!rejectsGiven_ && ::stat(opts_.results.c_str(), &out) == 0 && !S_ISREG(out.st_mode))
      throw std::invalid_argument(opts_.input + ": a job from a pipe whose results go to " + opts_.results +
                                  " needs --rejects FILE (nothing can be written next to either)");
    if (!rejectsGiven_) opts_.rejects = opts_.results + ".rejects.jsonl";
  }
  for (const std::string* out : {&opts_.results, &opts_.rejects}) {
    struct stat o {};
    if (::stat(out->c_str(), &o) == 0 && o.st_dev == in.st_dev && o.st_ino == in.st_ino)
      throw std::invalid_argument(*out + ": is the job file itself (its lines would count as done)");
  }
  // Counted ahead only in a regular file: a pipe (--workload /dev/stdin) is read once, by the feeder.
  if (S_ISREG(in.st_mode)) {
    std::ifstream probe(opts_.input);
    if (!probe) throw std::runtime_error(opts_.input + ": cannot open the job file");
    std::int64_t n = 0;
    std::string line;
    while (std::getline(probe, line)) ++n;
    std::lock_guard lock(s_->mutex);
    s_->progress.totalLines = n;
  }
  // Locked before the resume reads them: a second run of the same job is refused here, before it sends.
  const bool resumable = isRegularFile(opts_.results);
  try {
    s_->results = std::make_unique<LineFileWriter>(opts_.results, /*exclusive=*/true);
  } catch (const std::runtime_error& e) {
    // Next to the job by default: a job in a folder this user cannot write (the installed examples under
    // /usr/share) failed with "Permission denied" alone.
    const std::string what = e.what();
    const bool notWritable = what.find(std::strerror(EACCES)) != std::string::npos ||
                             what.find(std::strerror(EROFS)) != std::string::npos;
    if (resultsGiven_ || !notWritable) throw;
    throw std::runtime_error(what + " (results go next to the job unless --results FILE says where; --rejects "
                                    "FILE likewise)");
  }
  // A pipe or device as the results file has nothing to resume from (and reading it could block).
  if (resumable) {
    cutTornTail(opts_.results);
    std::ifstream in(opts_.results);
    std::string line;
    std::int64_t n = 0;
    while (std::getline(in, line)) {
      ++n;
      const nlohmann::json j = parseJsonText(line).value;
      if (!(j.is_object() && j.contains("id") && j["id"].is_string())) {
        logWarn("job", opts_.results + ":" + std::to_string(n) + ": unreadable result row ignored");
        continue;
      }
      const std::string& id = j["id"].get_ref<const std::string&>();
      done_.insert(id);
      if (!opts_.retryFailed) continue;
      if (worthRetrying(j)) retry_.insert(id);  // the last row of an id decides
      else retry_.erase(id);
    }
    for (const auto& id : retry_) done_.erase(id);
    if (!retry_.empty())
      logInfo("job", opts_.results + ": " + std::to_string(retry_.size()) +
                         " id(s) whose last result was a failure another try may pass are sent again (--retry-failed)");
  }
  // A resume rejects the same bad lines again: each row is written once (its line, error and bytes are the
  // same), and a row torn by a kill is cut first, or the next one would be glued to it.
  if (isRegularFile(opts_.rejects)) {
    cutTornTail(opts_.rejects);
    std::ifstream in(opts_.rejects);
    std::string line;
    while (std::getline(in, line)) rejectedBefore_.insert(std::hash<std::string>{}(line));
  }
  feeder_ = std::thread([this] { feed(); });
}

void JsonlJob::feed() {
  Shared& s = *s_;
  std::ifstream in(opts_.input);
  std::string line;
  std::int64_t lineNo = 0;
  std::unordered_set<std::string> seen;
  bool readToEnd = false;
  while (!s.cancel && !s.writeFailed) {
    if (!std::getline(in, line)) {
      readToEnd = true;
      break;
    }
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) {
      std::lock_guard lock(s.mutex);
      ++s.progress.lines;
      continue;
    }
    std::string error;
    std::optional<Request> req = parseJobLine(line, &error);
    if (req && !seen.insert(req->id).second) {
      error = "duplicate id \"" + req->id + "\"";
      req.reset();
    }
    // Its result row would carry the id scrubbed, so no resume could find it: sent again by every one.
    if (req && SecretRegistry::redact(req->id) != req->id) {
      error = "the id holds an API key (it is written scrubbed, and a resume could not find its result): use another";
      req.reset();
    }
    if (!req) {
      logWarn("job", opts_.input + ":" + std::to_string(lineNo) + ": " + error);
      std::string row = rejectLine(lineNo, error, line);
      if (!rejectedBefore_.count(std::hash<std::string>{}(row))) {
        // Opened at the first reject: a job with none leaves no empty file beside it (in a read-only folder, such
        // as an installed package's examples, the job could not run at all).
        if (!s.rejects && s.rejectsError.empty()) {
          try {
            auto writer = std::make_unique<LineFileWriter>(opts_.rejects, /*exclusive=*/true);
            std::lock_guard lock(s.mutex);
            s.rejects = std::move(writer);
          } catch (const std::exception& e) {
            logError("job", e.what());
            std::lock_guard lock(s.mutex);
            s.rejectsError = e.what();
          }
        }
        if (s.rejects) s.rejects->append(std::move(row));
      }
      std::lock_guard lock(s.mutex);
      ++s.progress.lines;
      ++s.progress.rejected;
      continue;
    }
    {
      std::unique_lock lock(s.mutex);
      ++s.progress.lines;
      if (done_.count(req->id)) {
        ++s.progress.skipped;
        continue;
      }
      const auto tier = static_cast<std::size_t>(req->tier);
      auto& inQueue = s.inEngine[req->group][tier];  // a map node: stays put while the lock is released
      // Woken by every result (a slot, and a new answer rate), and at least once a second (the rate decays).
      while (!((s.outstanding < opts_.maxOutstanding && inQueue < capFor(req->group, tier, req->deadlineS) &&
                !s.paused) ||
               s.cancel || s.writeFailed))
        s.cv.wait_for(lock, std::chrono::seconds(1));
      if (s.cancel || s.writeFailed) break;
      ++s.outstanding;
      ++inQueue;
      ++s.progress.submitted;
      if (retry_.count(req->id)) ++s.progress.retried;  // sent again, not only read
      s.handles.emplace(req->id, 0);
      if (Shared::Pace& p = s.pace[req->group]; p.firstSent == std::chrono::steady_clock::time_point{})
        p.firstSent = std::chrono::steady_clock::now();
    }
    std::string id = req->id;
    const RequestHandle h = engine_.submit(std::move(*req), [shared = s_](const Result& r) { shared->onResult(r); });
    std::lock_guard lock(s.mutex);
    if (auto it = s.handles.find(id); it != s.handles.end()) it->second = h;  // else answered already
  }
  {
    std::lock_guard lock(s.mutex);
    s.progress.inputDone = true;
    s.progress.readToEnd = readToEnd;
    s.finishIfDone();
    s.cv.notify_all();
  }
  // The results file may fail after the whole input is read: this thread stays until the job ends, so the failure
  // reaches the engine from here (the writer thread's callback may outlive the engine).
  std::unique_lock lock(s.mutex);
  s.cv.wait(lock, [&] { return s.progress.finished || s.cancel || s.writeFailed; });
  if (!s.writeFailed) return;
  lock.unlock();
  // Every result from now on would be paid for and then lost (the resume sends it again): what the engine still
  // holds of the job is cancelled, never sent (a full disk had the 1,646 queued requests after it sent and lost).
  logError("job", "stopped reading " + opts_.input + " after line " + std::to_string(lineNo) +
                      ": its results cannot be written; the job's requests still in the engine are cancelled, the "
                      "resume does them");
  cancelInEngine("the job's results file cannot be written");
}

std::int64_t JsonlJob::capFor(const std::string& group, std::size_t tier, double lineDeadlineS) {
  const EngineConfig& ec = engine_.config();
  const double maxWaitS =
      lineDeadlineS > 0 ? std::min(lineDeadlineS, ec.tiers[tier].maxWaitS) : ec.tiers[tier].maxWaitS;
  const GroupConfig* g = ec.findGroup(group);
  std::int64_t cap = g ? std::max(1, g->concurrency) : 1;  // an unknown group is refused at once, one at a time
  // Before any answer, no more than a requests/s ceiling sends in that half of max_wait_s either.
  for (const double rps : {g ? g->rateCeiling.requestsPerS : 0.0, ec.rateCeiling.requestsPerS})
    if (rps > 0)
      cap = std::min<std::int64_t>(
          cap, std::max<std::int64_t>(1, static_cast<std::int64_t>(rps * kQueueWaitShare * maxWaitS)));
  auto it = s_->pace.find(group);
  if (it != s_->pace.end()) {
    auto& at = it->second.answeredAt;
    const auto now = std::chrono::steady_clock::now();
    while (!at.empty() && at.front() + kRateWindow <= now) at.pop_front();
    if (!at.empty()) {
      // Over the window, or since the job's first request to the group when that is shorter: answers come in
      // batches of the concurrency, and counted from the first answer, two batches 3 s apart read as twice the rate.
      const double spanS = std::clamp(std::chrono::duration<double>(now - it->second.firstSent).count(), 0.5,
                                      std::chrono::duration<double>(kRateWindow).count());
      const double rate = static_cast<double>(at.size()) / spanS;
      const double waitS = it->second.latencyS + kQueueWaitShare * maxWaitS;
      cap = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(rate * waitS)));
    }
  }
  return std::min(cap, tierCap_[tier]);
}

void JsonlJob::cancelInEngine(const std::string& why) {
  std::vector<RequestHandle> hs;
  {
    std::lock_guard lock(s_->mutex);
    for (const auto& [id, h] : s_->handles)
      if (h) hs.push_back(h);
  }
  for (RequestHandle h : hs) engine_.cancel(h, why);
}

void JsonlJob::Shared::onResult(const Result& r) {
  // Engine thread. Its queue slot is free now, whatever the write does.
  {
    std::lock_guard lock(mutex);
    --inEngine[r.group][static_cast<std::size_t>(r.tier)];
    handles.erase(r.id);
    if (r.attempts > 0) {  // sent: a shed (never sent) says nothing of how fast the group answers
      Pace& p = pace[r.group];
      p.answeredAt.push_back(std::chrono::steady_clock::now());
      if (p.answeredAt.size() > 100000) p.answeredAt.pop_front();  // bounded, whatever the rate
      const double latencyS = r.latencyMs / 1000.0;
      p.latencyS = p.latencyS > 0 ? 0.875 * p.latencyS + 0.125 * latencyS : latencyS;
    }
    cv.notify_all();
  }
  // A result cancelled by an engine stop is not written: the next run redoes it.
  if (r.error == ErrorKind::Cancelled) {
    std::lock_guard lock(mutex);
    ++progress.cancelled;
    --outstanding;
    finishIfDone();
    cv.notify_all();
    return;
  }
  if (observer) observer(r);
  {
    std::lock_guard lock(mutex);
    if (r.ok()) ++progress.succeeded;
    else ++progress.failed;
  }
  results->append(SecretRegistry::dumpRedacted(resultToJson(r)),
                  [self = shared_from_this()](bool ok) { self->onWritten(ok); });
}

void JsonlJob::Shared::onWritten(bool ok) {
  if (!ok) writeFailed = true;
  std::lock_guard lock(mutex);
  --outstanding;
  finishIfDone();
  cv.notify_all();
}

void JsonlJob::Shared::finishIfDone() {
  if (!progress.inputDone || outstanding != 0 || finishing) return;
  finishing = true;
  // Rejects first (when there were any), then results: once `finished` is seen, both files are complete on disk.
  auto syncResults = [self = shared_from_this()](bool) {
    self->results->syncThen([self](bool) {
      std::lock_guard lock(self->mutex);
      self->progress.finished = true;
      self->cv.notify_all();
    });
  };
  if (rejects) rejects->syncThen(syncResults);
  else syncResults(true);
}

bool JsonlJob::waitFinished(double timeoutS) {
  std::unique_lock lock(s_->mutex);
  return s_->cv.wait_for(lock, std::chrono::duration<double>(timeoutS), [&] { return s_->progress.finished; });
}

void JsonlJob::setPaused(bool paused) {
  s_->paused = paused;
  std::lock_guard lock(s_->mutex);
  s_->cv.notify_all();
}

void JsonlJob::cancel() {
  s_->cancel = true;
  std::lock_guard lock(s_->mutex);
  s_->cv.notify_all();
}

JobProgress JsonlJob::progress() const {
  JobProgress p;
  LineFileWriter* rejects = nullptr;
  std::string rejectsError;
  {
    std::lock_guard lock(s_->mutex);  // the rejects file opens at the first reject, on the feeder's thread
    p = s_->progress;
    rejects = s_->rejects.get();
    rejectsError = s_->rejectsError;
  }
  if (s_->results) p.writeError = s_->results->error();
  if (p.writeError.empty()) p.writeError = rejects ? rejects->error() : rejectsError;
  return p;
}

}  // namespace tg
