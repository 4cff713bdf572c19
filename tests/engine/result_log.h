// Engine results collected from callbacks on any thread, for engine tests over loopback: counting every
// call, so a second callback for one request shows.
#pragma once

#include "request.h"
#include "types.h"

#include <QByteArray>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tgtest {

// The callback shares the collected state, so an engine destroyed after its Results (declared before it, or a
// test that returned early past its stop()) still calls back into something alive.
struct Results {
  struct State {
    std::mutex mutex;
    std::vector<tg::Result> all;
    std::atomic<int> calls{0};
  };
  std::shared_ptr<State> state = std::make_shared<State>();
  std::atomic<int>& calls = state->calls;

  tg::ResultCallback callback() {
    return [s = state](const tg::Result& r) {
      std::lock_guard lock(s->mutex);
      s->all.push_back(r);
      ++s->calls;
    };
  }
  tg::Result at(std::size_t i) {
    std::lock_guard lock(state->mutex);
    return state->all.at(i);
  }
  int countIds(const std::string& id) {
    std::lock_guard lock(state->mutex);
    int n = 0;
    for (const auto& r : state->all) n += r.id == id;
    return n;
  }
  tg::Result byId(const std::string& id) {  // the first answer for `id`, or an empty Result
    std::lock_guard lock(state->mutex);
    for (const auto& r : state->all)
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
