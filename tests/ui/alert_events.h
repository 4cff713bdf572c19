// Engine events as AlertPolicy and AlertTray take them, with hand-set times, for the alert tests.
#pragma once

#include "event.h"

#include <string>

namespace tgtest {

inline constexpr tg::EpochMs kAlertT0 = 1'800'000'000'000;

inline tg::Event makeEvent(tg::EventKind kind, tg::EpochMs ts, const std::string& group,
                            nlohmann::json detail = nlohmann::json::object()) {
  tg::Event e;
  e.kind = kind;
  e.tsMs = ts;
  e.group = group;
  e.detail = std::move(detail);
  return e;
}

inline tg::Event breaker(tg::EpochMs ts, const std::string& group, const char* from, const char* to) {
  return makeEvent(tg::EventKind::BreakerTransition, ts, group, {{"from", from}, {"to", to}});
}

}  // namespace tgtest
