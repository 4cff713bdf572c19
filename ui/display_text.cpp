#include "display_text.h"

#include <QCoreApplication>
#include <QLocale>

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

QString rateCeilingText(const RateCeilingConfig& c) {
  QStringList parts;
  if (c.requestsPerS > 0)
    parts << QCoreApplication::translate("DisplayText", "%1 req/s").arg(QLocale().toString(c.requestsPerS, 'g', 6));
  if (c.tokensPerMin > 0)
    parts << QCoreApplication::translate("DisplayText", "%1 tokens/min").arg(QLocale().toString(c.tokensPerMin, 'f', 0));
  return parts.isEmpty() ? QCoreApplication::translate("DisplayText", "none") : parts.join(QStringLiteral(" · "));
}

namespace {

RateCeilingConfig ceilingOf(const nlohmann::json& j) {
  RateCeilingConfig c;
  if (!j.is_object()) return c;
  const auto number = [&j](const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
  };
  c.requestsPerS = number("requests_per_s");
  c.tokensPerMin = number("tokens_per_min");
  return c;
}

QString jsonText(const nlohmann::json& j) {
  if (j.is_number_integer()) return QString::number(j.get<std::int64_t>());
  if (j.is_number()) return QLocale().toString(j.get<double>(), 'g', 6);
  if (j.is_string()) return QString::fromStdString(j.get<std::string>());
  return QString::fromStdString(j.dump());
}

QString operatorActionText(const Event& e) {
  const nlohmann::json& d = e.detail;
  if (!d.is_object() || !d.contains("action") || !d["action"].is_string()) return {};
  const std::string action = d["action"].get<std::string>();
  const std::string target = d.value("target", std::string());
  const QString actor = QString::fromStdString(d.value("actor", std::string()));
  if (d.contains("ok") && d["ok"].is_boolean() && !d["ok"].get<bool>())
    return QCoreApplication::translate("DisplayText", "Refused: no group \"%1\" (%2)")
        .arg(QString::fromStdString(target), QString::fromStdString(action));
  // Targets: "*" (all groups), "group", "*/P2" or "group/P2".
  const std::size_t slash = target.find('/');
  const QString where = QString::fromStdString(target.substr(0, slash));
  const bool all = where == QLatin1String("*");
  const QString tier = slash == std::string::npos ? QString() : QString::fromStdString(target.substr(slash + 1));
  const nlohmann::json before = d.value("before", nlohmann::json()), after = d.value("after", nlohmann::json());
  QString text;
  if (action == "pause_tier") {
    text = all ? QCoreApplication::translate("DisplayText", "Paused %1 on all groups").arg(tier)
               : QCoreApplication::translate("DisplayText", "Paused %1 on %2").arg(tier, where);
  } else if (action == "resume_tier") {
    text = all ? QCoreApplication::translate("DisplayText", "Resumed %1 on all groups").arg(tier)
               : QCoreApplication::translate("DisplayText", "Resumed %1 on %2").arg(tier, where);
  } else if (action == "pause_group") {
    text = QCoreApplication::translate("DisplayText", "Paused group %1").arg(where);
  } else if (action == "resume_group") {
    text = QCoreApplication::translate("DisplayText", "Resumed group %1").arg(where);
  } else if (action == "drain") {
    text = QCoreApplication::translate("DisplayText", "Drained %1: %2 queued requests cancelled")
               .arg(where, jsonText(before));
  } else if (action == "set_concurrency") {
    text = all ? QCoreApplication::translate("DisplayText", "Concurrency of all groups: %1 → %2")
                     .arg(jsonText(before), jsonText(after))
               : QCoreApplication::translate("DisplayText", "Concurrency of %1: %2 → %3")
                     .arg(where, jsonText(before), jsonText(after));
  } else if (action == "set_rate_ceiling") {
    const QString from = rateCeilingText(ceilingOf(before)), to = rateCeilingText(ceilingOf(after));
    text = all ? QCoreApplication::translate("DisplayText", "Rate ceiling of all groups: %1 → %2").arg(from, to)
               : QCoreApplication::translate("DisplayText", "Rate ceiling of %1: %2 → %3").arg(where, from, to);
  } else {
    return {};
  }
  if (actor.isEmpty() || actor == QLatin1String("operator")) return text;
  return QCoreApplication::translate("DisplayText", "%1 (by %2)").arg(text, actor);
}

}  // namespace

QString eventMessageText(const Event& e) {
  if (e.kind == EventKind::OperatorAction)
    if (QString words = operatorActionText(e); !words.isEmpty()) return words;
  return QString::fromStdString(e.message);
}

}  // namespace tg::ui
