#include "display_text.h"

#include "json_text.h"
#include "snapshot.h"
#include "time_text.h"

#include <QDateTime>
#include <QCoreApplication>
#include <QLocale>

#include <cmath>

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

QString durationText(double seconds) {
  if (std::isnan(seconds)) return QStringLiteral("–");
  if (std::isinf(seconds))
    return seconds > 0 ? QCoreApplication::translate("DisplayText", "forever", "duration")
                       : QStringLiteral("-") + QCoreApplication::translate("DisplayText", "forever", "duration");
  const double s = std::fabs(seconds);
  const long long ms = std::llround(s * 1000), whole = std::llround(s);
  const QString sign = seconds < 0 && ms > 0 ? QStringLiteral("-") : QString();
  const QLocale locale;
  const auto two = [](long long v) { return QStringLiteral("%1").arg(v, 2, 10, QLatin1Char('0')); };
  QString text;
  if (s >= 1e15)
    text = QCoreApplication::translate("DisplayText", "%1 d", "duration: days").arg(locale.toString(s / 86400, 'g', 3));
  else if (ms < 1000)
    text = QCoreApplication::translate("DisplayText", "%1 ms", "duration").arg(ms);
  else if (ms < 9950)
    text = QCoreApplication::translate("DisplayText", "%1 s", "duration").arg(locale.toString(s, 'f', 1));
  else if (whole < 60)
    text = QCoreApplication::translate("DisplayText", "%1 s", "duration").arg(whole);
  else if (whole < 3600)
    text = QCoreApplication::translate("DisplayText", "%1 min %2 s", "duration").arg(whole / 60).arg(whole % 60);
  else if (whole < 86400)
    text = QCoreApplication::translate("DisplayText", "%1 h %2 min", "duration")
               .arg(QString::number(whole / 3600), two(whole % 3600 / 60));
  else
    text = QCoreApplication::translate("DisplayText", "%1 d %2 h", "duration")
               .arg(QString::number(whole / 86400), two(whole % 86400 / 3600));
  return sign + text;
}

QString dimensionText(Dimension d) {
  switch (d) {
    case Dimension::Requests: return QCoreApplication::translate("DisplayText", "requests", "quota dimension");
    case Dimension::Tokens: return QCoreApplication::translate("DisplayText", "tokens", "quota dimension");
  }
  return fromCore(dimensionName(d));
}

namespace {

// Local time, as the charts' axes and the event log show it: in UTC an operator east of Greenwich read
// "resets at 00:47" beside an axis at 08:46 as hours away.
QString clockText(EpochMs ms) { return QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("HH:mm:ss")); }

QString ceilingPartText(Dimension d, double amount) {
  RateCeilingConfig c;
  (d == Dimension::Requests ? c.requestsPerS : c.tokensPerMin) = amount;
  return rateCeilingText(c);
}

// What another instance of the fleet said when it held a shared key (core's words, sent through Redis).
QString fleetHoldText(const std::string& why) {
  if (why == "quota exhausted") return QCoreApplication::translate("DisplayText", "quota exhausted");
  if (why == "429 without quota headers") return QCoreApplication::translate("DisplayText", "429 without quota headers");
  if (why == "429 with Retry-After") return QCoreApplication::translate("DisplayText", "429 with Retry-After");
  if (why == "429, window exhausted") return QCoreApplication::translate("DisplayText", "429, window used up");
  return QString::fromStdString(why);
}

double numberAt(const nlohmann::json& d, const char* key, double otherwise = kUnknown) {
  return fieldNumber(d, key, otherwise);
}

std::string stringAt(const nlohmann::json& d, const char* key) { return fieldString(d, key); }

QString breakerWord(const std::string& state) {
  if (state == "closed") return breakerStateText(BreakerState::Closed);
  if (state == "open") return breakerStateText(BreakerState::Open);
  if (state == "half-open") return breakerStateText(BreakerState::HalfOpen);
  return QString::fromStdString(state);
}

QString shedCauseText(const std::string& cause) {
  if (cause == "deadline") return QCoreApplication::translate("DisplayText", "deadline passed while queued");
  if (cause == "queue_full") return QCoreApplication::translate("DisplayText", "queue full");
  if (cause == "breaker_open") return QCoreApplication::translate("DisplayText", "breaker open past the deadline");
  if (cause == "tier_paused") return QCoreApplication::translate("DisplayText", "paused past the deadline");
  if (cause == "quota_exhausted") return QCoreApplication::translate("DisplayText", "quota exhausted beyond the wait cap");
  if (cause == "draining") return QCoreApplication::translate("DisplayText", "draining");
  return {};
}

// Every event but an operator action, in words from its detail; empty when the detail is not what this version
// writes.
QString engineEventText(const Event& e) {
  static const nlohmann::json kNone = nlohmann::json::object();
  const nlohmann::json& d = e.detail.is_object() ? e.detail : kNone;
  switch (e.kind) {
    case EventKind::EngineStart: {
      const int groups = int(numberAt(d, "groups", 0));
      return QCoreApplication::translate("DisplayText", "Engine started (%n group(s))", nullptr, groups);
    }
    case EventKind::EngineStop:
      if (const auto u = d.find("unclean"); u != d.end() && u->is_boolean() && u->get<bool>())
        return QCoreApplication::translate("DisplayText",
                                           "Tollgate (pid %1) ended without stopping: killed, crashed or the machine "
                                           "went down; recorded until here")
            .arg(jsonText(d.value("pid", nlohmann::json(0))));
      return QCoreApplication::translate("DisplayText", "Engine stopped");
    case EventKind::Burst429Start: {
      const std::string cls = stringAt(d, "classification");
      if (cls.empty()) return {};
      QString what = cls == "quota_exhausted" ? QCoreApplication::translate("DisplayText", "429: quota exhausted")
                     : cls == "burst"          ? QCoreApplication::translate("DisplayText", "429 burst")
                                               : QCoreApplication::translate("DisplayText", "429 without quota headers");
      if (const double ra = numberAt(d, "retry_after_s"); known(ra))
        return QCoreApplication::translate("DisplayText", "%1, Retry-After %2").arg(what, durationText(ra));
      if (const double reset = numberAt(d, "reset_in_s"); known(reset))
        return QCoreApplication::translate("DisplayText", "%1, reset in %2").arg(what, durationText(reset));
      return what;
    }
    case EventKind::Burst429End:
      if (!d.contains("count")) return {};
      return QCoreApplication::translate("DisplayText", "429 burst over: %1 in %2, peak %3/s")
          .arg(jsonText(d["count"]), durationText(std::round(numberAt(d, "duration_s", 0))),
               jsonText(d.value("peak_per_s", nlohmann::json(0))));
    case EventKind::BreakerTransition:
      if (!d.contains("from") || !d.contains("to")) return {};
      return QCoreApplication::translate("DisplayText", "Breaker %1 → %2")
          .arg(breakerWord(stringAt(d, "from")), breakerWord(stringAt(d, "to")));
    case EventKind::QuotaChange: {
      const std::string dim = stringAt(d, "dimension");
      if (dim.empty()) return {};
      const QString name = dim == "requests" ? dimensionText(Dimension::Requests)
                           : dim == "tokens" ? dimensionText(Dimension::Tokens)
                                             : QString::fromStdString(dim);
      const QString before = jsonText(d.value("before", nlohmann::json())),
                    after = jsonText(d.value("after", nlohmann::json()));
      // Per key: a group of two keys told the same change twice, and the two lines read as one doubled.
      const std::string key = stringAt(d, "key");
      if (key.empty())
        return QCoreApplication::translate("DisplayText", "The upstream's %1 limit changed: %2 → %3")
            .arg(name, before, after);
      return QCoreApplication::translate("DisplayText", "The upstream's %1 limit changed: %2 → %3 (key %4)")
          .arg(name, before, after, QString::fromStdString(key));
    }
    case EventKind::QuotaExhausted: {
      const double until = numberAt(d, "until_ms");
      if (!known(until)) return {};
      const std::string key = stringAt(d, "key");
      return key.empty() ? QCoreApplication::translate("DisplayText", "Quota exhausted until %1")
                               .arg(clockText(EpochMs(until)))
                         : QCoreApplication::translate("DisplayText", "Quota exhausted until %1 (key %2)")
                               .arg(clockText(EpochMs(until)), QString::fromStdString(key));
    }
    case EventKind::RequestShed: {
      std::string cause = stringAt(d, "cause");
      if (cause.empty() && stringAt(d, "reason").rfind("deadline passed", 0) == 0) cause = "deadline";  // older files
      const QString why = shedCauseText(cause);
      if (why.isEmpty() || !d.contains("count")) return {};
      const int count = int(numberAt(d, "count", 0));
      return QCoreApplication::translate("DisplayText", "%n request(s) shed: %1", nullptr, count).arg(why);
    }
    case EventKind::HistoryGap: {
      const std::string reason = stringAt(d, "reason");
      const QString why = reason == "write queue overflow"
                              ? QCoreApplication::translate("DisplayText", "the write queue overflowed")
                              : QString::fromStdString(reason);  // the file system's or SQLite's own error
      return QCoreApplication::translate("DisplayText", "History lost %1 rows: %2")
          .arg(jsonText(d.value("rows", nlohmann::json(0))), why);
    }
    case EventKind::SharedQuota: {
      if (const std::string mode = stringAt(d, "mode"); !mode.empty()) {
        if (mode == "fallback") {
          const QString live = jsonText(d.value("live", nlohmann::json(1)));
          if (const std::string why = stringAt(d, "why"); !why.empty())  // Redis's own words, as core has them
            return QCoreApplication::translate("DisplayText",
                                               "Shared quota: Redis unreachable or refusing (%2), this instance takes "
                                               "1/%1 of each shared limit")
                .arg(live, QString::fromStdString(toValidUtf8(why)));
          return QCoreApplication::translate("DisplayText",
                                             "Shared quota: Redis unreachable or refusing, this instance takes 1/%1 of "
                                             "each shared limit")
              .arg(live);
        }
        if (mode == "shared")
          return QCoreApplication::translate("DisplayText", "Shared quota: shared with the fleet through Redis");
        return QCoreApplication::translate("DisplayText", "Shared quota: %1").arg(sharedModeText(mode));
      }
      const double waitS = numberAt(d, "wait_s");
      if (!d.contains("key") || !known(waitS)) return {};
      return QCoreApplication::translate("DisplayText", "Key %1 held until %2: %3 on instance %4")
          .arg(QString::fromStdString(stringAt(d, "key")), clockText(e.tsMs + EpochMs(waitS * 1000)),
               fleetHoldText(stringAt(d, "reason")), QString::fromStdString(stringAt(d, "from")));
    }
    case EventKind::ConfigReload: {
      if (const std::string error = stringAt(d, "error"); !error.empty())
        return QCoreApplication::translate("DisplayText", "Configuration reload refused, nothing changed: %1")
            .arg(QString::fromStdString(toValidUtf8(error)));
      QStringList applied, later;
      if (const auto a = d.find("applied"); a != d.end() && a->is_array())
        for (const auto& one : *a)
          if (one.is_string()) applied << QString::fromStdString(toValidUtf8(one.get<std::string>()));
      if (const auto r = d.find("restart_only"); r != d.end() && r->is_array())
        for (const auto& one : *r)
          if (one.is_string()) later << QString::fromStdString(toValidUtf8(one.get<std::string>()));
      QString text = applied.isEmpty()
                         ? QCoreApplication::translate("DisplayText", "Configuration reloaded: nothing to change live")
                         : QCoreApplication::translate("DisplayText", "Configuration reloaded: %1")
                               .arg(applied.join(QStringLiteral("; ")));
      if (!later.isEmpty())
        text += QCoreApplication::translate("DisplayText", "; at the next start: %1").arg(later.join(QStringLiteral(", ")));
      return text;
    }
    case EventKind::RequestFailed:
      return QCoreApplication::translate("DisplayText", "Request failed: %1").arg(QString::fromStdString(e.message));
    case EventKind::OperatorAction: break;
  }
  return {};
}

}  // namespace

QString eventMessageText(const Event& e) {
  QString words = e.kind == EventKind::OperatorAction ? operatorActionText(e) : engineEventText(e);
  return words.isEmpty() ? QString::fromStdString(e.message) : words;
}

QString waitReasonText(const WaitReason& w) {
  const QString dim = dimensionText(w.dimension);
  switch (w.code) {
    case WaitCode::None: return {};
    case WaitCode::GroupPaused: return QCoreApplication::translate("DisplayText", "group paused", "wait");
    case WaitCode::TierPaused:
      return QCoreApplication::translate("DisplayText", "%1 paused", "wait: a tier").arg(fromCore(tierName(w.tier)));
    case WaitCode::GlobalConcurrency:
      return QCoreApplication::translate("DisplayText", "concurrency of all groups %1/%2").arg(w.used).arg(w.limit);
    case WaitCode::Concurrency:
      return QCoreApplication::translate("DisplayText", "concurrency %1/%2").arg(w.used).arg(w.limit);
    case WaitCode::RateCeiling:
      return QCoreApplication::translate("DisplayText", "rate ceiling %1").arg(ceilingPartText(w.dimension, w.amount));
    case WaitCode::GlobalRateCeiling:
      return QCoreApplication::translate("DisplayText", "rate ceiling of all groups %1")
          .arg(ceilingPartText(w.dimension, w.amount));
    case WaitCode::BreakerOpen:
      return QCoreApplication::translate("DisplayText", "breaker open until %1").arg(clockText(w.untilMs));
    case WaitCode::BreakerProbing:
      return QCoreApplication::translate("DisplayText", "breaker half-open: one request tests the upstream");
    case WaitCode::RetryAfter:
      return QCoreApplication::translate("DisplayText", "Retry-After until %1").arg(clockText(w.untilMs));
    case WaitCode::ServerRetryAfter:
      return QCoreApplication::translate("DisplayText", "Retry-After (HTTP %1) until %2")
          .arg(QString::number(w.status), clockText(w.untilMs));
    case WaitCode::ResetAt:
      return QCoreApplication::translate("DisplayText", "window used up, resets at %1").arg(clockText(w.untilMs));
    case WaitCode::QuotaExhausted:
      return QCoreApplication::translate("DisplayText", "quota exhausted until %1").arg(clockText(w.untilMs));
    case WaitCode::RefusedHolding:
      return QCoreApplication::translate("DisplayText", "refused, Retry-After: holding %1").arg(durationText(w.seconds));
    case WaitCode::RefusedBackingOff:
      return QCoreApplication::translate("DisplayText", "429s without quota headers: backing off %1")
          .arg(durationText(w.seconds));
    case WaitCode::RefusedPausing:
      return QCoreApplication::translate("DisplayText", "refused: pausing %1").arg(durationText(w.seconds));
    case WaitCode::ProbeAlone:
      return QCoreApplication::translate("DisplayText", "refused: one request goes alone until one passes");
    case WaitCode::Refill:
      return QCoreApplication::translate("DisplayText", "%1: refill in %2").arg(dim, durationText(w.seconds));
    case WaitCode::ResetIn:
      if (known(w.probeS))
        return QCoreApplication::translate("DisplayText", "%1 exhausted, reset in %2 (one request tests it in %3)")
            .arg(dim, durationText(w.seconds), durationText(w.probeS));
      return QCoreApplication::translate("DisplayText", "%1 exhausted, reset in %2").arg(dim, durationText(w.seconds));
    case WaitCode::NoneLeftAnswers:
      return QCoreApplication::translate("DisplayText", "%1: none left, waiting for answers in flight").arg(dim);
    case WaitCode::NoneLeftNext:
      return QCoreApplication::translate("DisplayText", "%1: none left, next in %2").arg(dim, durationText(w.seconds));
    case WaitCode::Pacing:
      return QCoreApplication::translate("DisplayText", "%1: next in %2").arg(dim, durationText(w.seconds));
    case WaitCode::FleetHold:
      return QCoreApplication::translate("DisplayText", "fleet: %1 on %2, until %3")
          .arg(fleetHoldText(w.note), QString::fromStdString(w.from), clockText(w.untilMs));
    case WaitCode::SharedShare:
      return QCoreApplication::translate("DisplayText", "shared quota (Redis unreachable or refusing): this instance's share");
    case WaitCode::SharedNextLease:
      return QCoreApplication::translate("DisplayText", "shared quota: the fleet's next lease for this instance");
    case WaitCode::SharedSpent:
      return QCoreApplication::translate("DisplayText", "shared quota: the fleet's capacity is spent");
    case WaitCode::SharedLease:
      return QCoreApplication::translate("DisplayText", "shared quota: waiting for a lease");
  }
  return fromCore(waitText(w));
}

QString incidentReasonText(const std::string& reason) {
  if (reason == "429_share") return QCoreApplication::translate("DisplayText", "share of 429s", "incident reason");
  if (reason == "5xx_share") return QCoreApplication::translate("DisplayText", "share of 5xx", "incident reason");
  if (reason == "breaker_open") return QCoreApplication::translate("DisplayText", "breaker open", "incident reason");
  if (reason == "queue_growth") return QCoreApplication::translate("DisplayText", "queue growth", "incident reason");
  if (reason == "shed") return QCoreApplication::translate("DisplayText", "requests shed", "incident reason");
  return QString::fromStdString(reason);
}

QString sharedModeText(const std::string& mode) {
  if (mode == "shared") return QCoreApplication::translate("DisplayText", "shared", "shared quota mode");
  if (mode == "fallback") return QCoreApplication::translate("DisplayText", "fallback", "shared quota mode");
  if (mode == "starting") return QCoreApplication::translate("DisplayText", "starting", "shared quota mode");
  return QString::fromStdString(mode);
}

}  // namespace tg::ui
