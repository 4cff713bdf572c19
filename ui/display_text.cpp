#include "display_text.h"

#include <QCoreApplication>

namespace tg::ui {

namespace {

QString fromCore(std::string_view name) { return QString::fromUtf8(name.data(), qsizetype(name.size())); }

}  // namespace

QString eventKindText(EventKind kind) {
  switch (kind) {
    case EventKind::EngineStart: return QCoreApplication::translate("DisplayText", "engine_start", "event kind");
    case EventKind::EngineStop: return QCoreApplication::translate("DisplayText", "engine_stop", "event kind");
    case EventKind::Burst429Start: return QCoreApplication::translate("DisplayText", "burst_429_start", "event kind");
    case EventKind::Burst429End: return QCoreApplication::translate("DisplayText", "burst_429_end", "event kind");
    case EventKind::BreakerTransition: return QCoreApplication::translate("DisplayText", "breaker", "event kind");
    case EventKind::QuotaChange: return QCoreApplication::translate("DisplayText", "quota_change", "event kind");
    case EventKind::QuotaExhausted: return QCoreApplication::translate("DisplayText", "quota_exhausted", "event kind");
    case EventKind::OperatorAction: return QCoreApplication::translate("DisplayText", "operator", "event kind");
    case EventKind::ConfigReload: return QCoreApplication::translate("DisplayText", "config_reload", "event kind");
    case EventKind::RequestShed: return QCoreApplication::translate("DisplayText", "shed", "event kind");
    case EventKind::RequestFailed: return QCoreApplication::translate("DisplayText", "request_failed", "event kind");
    case EventKind::HistoryGap: return QCoreApplication::translate("DisplayText", "history_gap", "event kind");
    case EventKind::SharedQuota: return QCoreApplication::translate("DisplayText", "shared_quota", "event kind");
  }
  return fromCore(eventKindName(kind));
}

QString severityText(Severity severity) {
  switch (severity) {
    case Severity::Info: return QCoreApplication::translate("DisplayText", "info", "event severity");
    case Severity::Warn: return QCoreApplication::translate("DisplayText", "warn", "event severity");
    case Severity::Error: return QCoreApplication::translate("DisplayText", "error", "event severity");
  }
  return fromCore(severityName(severity));
}

QString breakerStateText(BreakerState state) {
  switch (state) {
    case BreakerState::Closed: return QCoreApplication::translate("DisplayText", "closed", "circuit breaker state");
    case BreakerState::HalfOpen: return QCoreApplication::translate("DisplayText", "half-open", "circuit breaker state");
    case BreakerState::Open: return QCoreApplication::translate("DisplayText", "open", "circuit breaker state");
  }
  return fromCore(breakerStateName(state));
}

}  // namespace tg::ui
