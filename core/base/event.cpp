#include "event.h"

#include "json_text.h"

#include <array>
#include <utility>

namespace tg {
namespace {
constexpr std::array<std::pair<EventKind, std::string_view>, 13> kKindNames{{
    {EventKind::EngineStart, "engine_start"},
    {EventKind::EngineStop, "engine_stop"},
    {EventKind::Burst429Start, "burst_429_start"},
    {EventKind::Burst429End, "burst_429_end"},
    {EventKind::BreakerTransition, "breaker"},
    {EventKind::QuotaChange, "quota_change"},
    {EventKind::QuotaExhausted, "quota_exhausted"},
    {EventKind::OperatorAction, "operator"},
    {EventKind::ConfigReload, "config_reload"},
    {EventKind::RequestShed, "shed"},
    {EventKind::RequestFailed, "request_failed"},
    {EventKind::HistoryGap, "history_gap"},
    {EventKind::SharedQuota, "shared_quota"},
}};
constexpr std::array<std::string_view, 3> kSeverityNames{"info", "warn", "error"};
}  // namespace

std::string_view eventKindName(EventKind k) {
  for (const auto& [kind, name] : kKindNames)
    if (kind == k) return name;
  return "unknown";
}

std::optional<EventKind> parseEventKind(std::string_view s) {
  for (const auto& [kind, name] : kKindNames)
    if (name == s) return kind;
  return std::nullopt;
}

std::string_view severityName(Severity s) { return kSeverityNames[static_cast<int>(s)]; }

std::optional<Severity> parseSeverity(std::string_view s) {
  for (std::size_t i = 0; i < kSeverityNames.size(); ++i)
    if (kSeverityNames[i] == s) return static_cast<Severity>(i);
  return std::nullopt;
}

nlohmann::json toJson(const Event& e) {
  return {{"ts_ms", e.tsMs},
          {"kind", eventKindName(e.kind)},
          {"severity", severityName(e.severity)},
          {"group", toValidUtf8(e.group)},        // both may quote upstream header values
          {"message", toValidUtf8(e.message)},
          {"detail", e.detail}};
}

}  // namespace tg
