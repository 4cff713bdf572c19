// A submitted request on its way through the engine: what was asked, who to answer, and what happened so far.
#pragma once

#include "request.h"
#include "types.h"

#include <memory>

namespace tg {

struct Pending {
  Request req;
  ResultCallback done;
  RequestHandle handle = 0;  // 0: not cancellable by handle (scheduler tests, internal work)
  TimePoint submittedAt;
  TimePoint queuedAt;    // when it last entered a queue (for wait accounting)
  double waitMs = 0;
  int attempts = 0;
  double tokenCost = 0;  // estimate reserved per attempt
  int ownKey = -1;       // the group's key slot of Request::ownKey while this request holds it, else -1
  TimePoint deadline = TimePoint::max();  // queued (first try or retry) past this: shed
  Result last;           // what the last attempt produced

  // Answers the caller (exactly once: the Pending is consumed) with what the last attempt produced.
  static void finish(std::unique_ptr<Pending> p, TimePoint now) {
    p->last.totalMs = toSeconds(now - p->submittedAt) * 1000.0;
    p->last.waitMs = p->waitMs;
    p->last.attempts = p->attempts;
    if (p->done) p->done(p->last);
  }
  // Answers a request the engine never took (it had stopped) with Cancelled.
  static void cancelStopped(std::unique_ptr<Pending> p, TimePoint now) {
    p->last.id = p->req.id;
    p->last.group = p->req.group;
    p->last.tier = p->req.tier;
    p->last.error = ErrorKind::Cancelled;
    p->last.errorMessage = "engine stopped";
    p->last.shed = ShedReason::Draining;
    finish(std::move(p), now);
  }
};
using PendingPtr = std::unique_ptr<Pending>;

}  // namespace tg
