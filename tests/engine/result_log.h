// Engine results collected from callbacks on any thread, for engine tests over loopback: counting every
// call, so a second callback for one request shows.
#pragma once

#include "request.h"
#include "types.h"

#include <QByteArray>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace tgtest {

struct Results {
  std::mutex mutex;
  std::vector<tg::Result> all;
  std::atomic<int> calls{0};

  tg::ResultCallback callback() {
    return [this](const tg::Result& r) {
      std::lock_guard lock(mutex);
      all.push_back(r);
      ++calls;
    };
  }
  tg::Result at(std::size_t i) {
    std::lock_guard lock(mutex);
    return all.at(i);
  }
  int countIds(const std::string& id) {
    std::lock_guard lock(mutex);
    int n = 0;
    for (const auto& r : all) n += r.id == id;
    return n;
  }
  tg::Result byId(const std::string& id) {  // the first answer for `id`, or an empty Result
    std::lock_guard lock(mutex);
    for (const auto& r : all)
      if (r.id == id) return r;
    return {};
  }
};

// One line naming what a result is, for a failed check's message.
inline QByteArray describe(const tg::Result& r) {
  return QByteArray::fromStdString(r.id + ": " + std::string(tg::errorKindName(r.error)) + " status " +
                                   std::to_string(r.status) + " attempts " + std::to_string(r.attempts) + ": " +
                                   r.errorMessage);
}

}  // namespace tgtest
