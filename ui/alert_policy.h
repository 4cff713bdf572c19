// What the tray says and when it speaks up, decided from the engine's events alone (no widgets, no clock:
// every call takes the time it acts at), so it is tested by hand. The worst state of any group now:
// all fine < 429s (a burst in progress) < breaker not closed (open, or half-open and probing) < quota exhausted
// (until the time it named).
// A notification is called for when an incident starts: a 429 burst, a breaker opening, a quota exhausted, if
// that kind is enabled. One per incident: the same kind for the same group is not notified again until it has
// been quiet for kRepeatMs (bare 429s keep coming in short bursts, 2 s apart; each started a pop-up once a
// minute, and a half-open breaker that fails again is the same outage). Nor is one that comes within
// kCoalesceMs of a notification of the same kind (eight groups refused at once gave eight pop-ups in 0.5 s; the
// tray's tooltip names how many groups are in the worst state), or of a more severe one for the same group (an
// exhausted quota was two: "exhausted" and "429s started"). Not thread-safe: UI thread only.
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
  static constexpr EpochMs kRepeatMs = 60'000;   // quiet this long, the same kind for the same group is news again
  static constexpr EpochMs kCoalesceMs = 10'000;  // after a notification, what is folded into it (above)

  // Takes one event in time order; returns the notification it calls for, if any.
  std::optional<AlertNotice> onEvent(const Event& e);
  // The worst state over every group at `nowMs`, the first group it is worst in (empty when fine), and how many
  // groups are in it.
  AlertLevel level(EpochMs nowMs, std::string* group = nullptr, int* groups = nullptr) const;

  void setEnabled(AlertKind kind, bool on) { enabled_[static_cast<std::size_t>(kind)] = on; }
  bool enabled(AlertKind kind) const { return enabled_[static_cast<std::size_t>(kind)]; }
  // Forgets every group's state (the engine restarted, or the source changed).
  void clear();

 private:
  struct GroupAlerts {
    bool bursting = false;
    bool breakerOpen = false;  // open or half-open
    EpochMs exhaustedUntilMs = 0;
    std::array<EpochMs, kAlertKindCount> lastActiveMs{};  // the kind's last event (or an exhaustion's end)
    std::array<EpochMs, kAlertKindCount> lastNoticeMs{};
    std::array<bool, kAlertKindCount> noticed{};
  };
  // An incident of `kind` starts in `g` at e.tsMs, after being quiet since `quietSinceMs`.
  std::optional<AlertNotice> notice(AlertKind kind, const Event& e, GroupAlerts& g, EpochMs quietSinceMs);

  std::map<std::string, GroupAlerts> groups_;
  std::array<std::optional<EpochMs>, kAlertKindCount> lastShownMs_{};  // per kind, the last notification shown
  std::array<bool, kAlertKindCount> enabled_{true, true, true};
};

}  // namespace tg::ui
