// What the tray says and when it speaks up, decided from the engine's events alone (no widgets, no clock:
// every call takes the time it acts at), so it is tested by hand. The worst state of any group now:
// all fine < 429s (a burst in progress) < breaker open < quota exhausted (until the time it named).
// A notification is called for when an incident starts (a 429 burst), a breaker opens, or a quota is
// exhausted, if that kind is enabled and the same kind for the same group was not notified in the last
// minute (a flapping burst does not become a stream of pop-ups). Not thread-safe: UI thread only.
#pragma once

#include "event.h"

#include <array>
#include <map>
#include <optional>
#include <string>

namespace tg::ui {

enum class AlertLevel : int { Fine = 0, RateLimited = 1, BreakerOpen = 2, QuotaExhausted = 3 };

enum class AlertKind : int { Incident = 0, BreakerOpen = 1, QuotaExhausted = 2 };
inline constexpr int kAlertKindCount = 3;

struct AlertNotice {
  AlertKind kind = AlertKind::Incident;
  EpochMs tsMs = 0;   // the event's time: where "open the dashboard at that moment" goes
  std::string group;
};

class AlertPolicy {
 public:
  static constexpr EpochMs kRepeatMs = 60'000;  // the same kind for the same group, at most once a minute

  // Takes one event in time order; returns the notification it calls for, if any.
  std::optional<AlertNotice> onEvent(const Event& e);
  // The worst state over every group at `nowMs`, and the group it is worst in (empty when fine).
  AlertLevel level(EpochMs nowMs, std::string* group = nullptr) const;

  void setEnabled(AlertKind kind, bool on) { enabled_[static_cast<std::size_t>(kind)] = on; }
  bool enabled(AlertKind kind) const { return enabled_[static_cast<std::size_t>(kind)]; }
  // Forgets every group's state (the engine restarted, or the source changed).
  void clear();

 private:
  struct GroupAlerts {
    bool bursting = false;
    bool breakerOpen = false;
    EpochMs exhaustedUntilMs = 0;
    std::array<EpochMs, kAlertKindCount> lastNoticeMs{};
    std::array<bool, kAlertKindCount> noticed{};
  };
  std::optional<AlertNotice> notice(AlertKind kind, const Event& e, GroupAlerts& g);

  std::map<std::string, GroupAlerts> groups_;
  std::array<bool, kAlertKindCount> enabled_{true, true, true};
};

}  // namespace tg::ui
