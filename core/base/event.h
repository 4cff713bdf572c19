// Things that happened, as opposed to samples of state: 429 bursts, breaker transitions, quota changes,
// operator actions (the audit trail), engine start/stop. Produced on the engine thread, persisted by
// history, listed by the dashboard's event log, drawn as marks on the charts.
#pragma once

#include "types.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace tg {

enum class EventKind : std::uint8_t {
  EngineStart,
  EngineStop,
  Burst429Start,     // detail: {"peak_per_s", "retry_after_s", "reset_at_ms", "remaining", "classification"}
  Burst429End,       // detail: {"count", "duration_s", "peak_per_s"}
  BreakerTransition, // detail: {"from", "to", "failure_share", "calls"}
  QuotaChange,       // detail: {"dimension", "before", "after"}: the upstream reported a different limit
  QuotaExhausted,    // detail: {"until_ms", "wait_s"}: a wait beyond the cap
  OperatorAction,    // detail: {"action", "target", "before", "after", "actor", "instance"}
  ConfigReload,
  RequestShed,       // aggregated: detail {"count", "reason" (the last, in English), "cause" (its ShedReason name)}
  RequestFailed,     // non-rate-limit errors (5xx, network) worth an operator's eye
  HistoryGap,        // history could not write for a while: detail {"from_ms", "to_ms", "reason"}
  SharedQuota,       // the fleet's shared quota changed mode or held a key: detail {"mode", "live", "from", ...}
};

enum class Severity : std::uint8_t { Info = 0, Warn = 1, Error = 2 };

struct Event {
  EpochMs tsMs = 0;
  EventKind kind = EventKind::EngineStart;
  Severity severity = Severity::Info;
  std::string group;    // empty for engine-wide events
  std::string message;  // one line for people, never contains secrets
  nlohmann::json detail = nlohmann::json::object();
};

std::string_view eventKindName(EventKind k);
std::optional<EventKind> parseEventKind(std::string_view s);
std::string_view severityName(Severity s);
std::optional<Severity> parseSeverity(std::string_view s);

nlohmann::json toJson(const Event& e);

}  // namespace tg
