#include "alert_tray.h"

#include "desktop_notifier.h"

#include <QPainter>
#include <QPixmap>
#include <QSettings>
#include <QSystemTrayIcon>

namespace tg::ui {

namespace {

constexpr auto kSettingsGroup = "alerts";

QString settingsKey(AlertKind kind) {
  switch (kind) {
    case AlertKind::Incident: return QStringLiteral("incident");
    case AlertKind::BreakerOpen: return QStringLiteral("breaker_open");
    case AlertKind::QuotaExhausted: return QStringLiteral("quota_exhausted");
  }
  return {};
}

}  // namespace

AlertTray::AlertTray(QObject* parent, bool withIcon) : QObject(parent) {
  QSettings s;
  s.beginGroup(QLatin1String(kSettingsGroup));
  for (int k = 0; k < kAlertKindCount; ++k)
    policy_.setEnabled(AlertKind(k), s.value(settingsKey(AlertKind(k)), true).toBool());
  s.endGroup();
  if (!withIcon) return;
  setNotifier(DesktopNotifier::create(this));
  if (!QSystemTrayIcon::isSystemTrayAvailable()) return;
  icon_ = new QSystemTrayIcon(levelIcon(level_), this);
  icon_->setToolTip(tr("Tollgate: %1").arg(levelText()));
  connect(icon_, &QSystemTrayIcon::messageClicked, this, [this] {
    if (last_.tsMs) emit openRequested(last_.tsMs, QString::fromStdString(last_.group));
  });
  connect(icon_, &QSystemTrayIcon::activated, this, [this](QSystemTrayIcon::ActivationReason why) {
    if (why == QSystemTrayIcon::Trigger) emit openRequested(0, QString());
  });
}

void AlertTray::setIconVisible(bool on) {
  if (icon_) icon_->setVisible(on);
}

QColor AlertTray::levelColor(AlertLevel level) {
  switch (level) {
    case AlertLevel::Fine: return QColor(0x59, 0xa1, 0x4f);
    case AlertLevel::RateLimited: return QColor(0xf2, 0x8e, 0x2b);
    case AlertLevel::BreakerOpen: return QColor(0xd6, 0x27, 0x28);
    case AlertLevel::QuotaExhausted: return QColor(0x8e, 0x44, 0xad);
  }
  return Qt::gray;
}

QIcon AlertTray::levelIcon(AlertLevel level) {
  QIcon icon;
  for (int size : {16, 22, 32, 48}) {
    QPixmap pm(size, size);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(QColor(0, 0, 0, 120), std::max(1, size / 16)));
    p.setBrush(levelColor(level));
    p.drawEllipse(QRectF(1, 1, size - 2, size - 2));
    icon.addPixmap(pm);
  }
  return icon;
}

QString AlertTray::kindText(AlertKind kind) {
  switch (kind) {
    case AlertKind::Incident: return tr("Notify when an &incident starts (429s)");
    case AlertKind::BreakerOpen: return tr("Notify when a &breaker opens");
    case AlertKind::QuotaExhausted: return tr("Notify when a &quota is exhausted");
  }
  return {};
}

QString AlertTray::levelText() const {
  const int more = levelGroups_ - 1;
  switch (level_) {
    case AlertLevel::Fine: return tr("all fine");
    case AlertLevel::RateLimited:
      return more > 0 ? tr("429s on %1 and %n more group(s)", nullptr, more).arg(levelGroup_)
                      : tr("429s on %1").arg(levelGroup_);
    case AlertLevel::BreakerOpen:
      return more > 0 ? tr("breaker open on %1 and %n more group(s)", nullptr, more).arg(levelGroup_)
                      : tr("breaker open on %1").arg(levelGroup_);
    case AlertLevel::QuotaExhausted:
      return more > 0 ? tr("quota exhausted on %1 and %n more group(s)", nullptr, more).arg(levelGroup_)
                      : tr("quota exhausted on %1").arg(levelGroup_);
  }
  return {};
}

void AlertTray::setNotifies(AlertKind kind, bool on) {
  policy_.setEnabled(kind, on);
  QSettings s;
  s.beginGroup(QLatin1String(kSettingsGroup));
  s.setValue(settingsKey(kind), on);
  s.endGroup();
}

QString AlertTray::noticeText(const AlertNotice& n) const {
  const QString g = QString::fromStdString(n.group);
  switch (n.kind) {
    case AlertKind::Incident: return tr("429s started on %1").arg(g);
    case AlertKind::BreakerOpen: return tr("The breaker of %1 opened: its requests wait").arg(g);
    case AlertKind::QuotaExhausted: return tr("The quota of %1 is exhausted").arg(g);
  }
  return {};
}

void AlertTray::setNotifier(DesktopNotifier* n) {
  if (notifier_) disconnect(notifier_, nullptr, this, nullptr);
  notifier_ = n;
  if (!n) return;
  connect(n, &DesktopNotifier::clicked, this, [this](int tag) {
    auto it = shown_.find(tag);
    if (it == shown_.end()) return;
    const AlertNotice notice = it->second;
    shown_.erase(it);
    emit openRequested(notice.tsMs, QString::fromStdString(notice.group));
  });
}

void AlertTray::onEvent(const Event& e) {
  if (auto n = policy_.onEvent(e)) {
    last_ = *n;
    const QString body = noticeText(*n) + QLatin1Char('\n') + tr("Click to open the dashboard there.");
    const bool critical = n->kind != AlertKind::Incident;
    if (notifier_) {
      const int tag = nextTag_++;
      if (shown_.size() >= DesktopNotifier::kMaxOpen) shown_.erase(shown_.begin());
      shown_[tag] = *n;
      notifier_->notify(tr("Tollgate"), body, critical, tag);
    } else if (icon_) {
      icon_->showMessage(tr("Tollgate"), body, critical ? QSystemTrayIcon::Critical : QSystemTrayIcon::Warning);
    }
  }
  refresh(e.tsMs);
}

void AlertTray::refresh(qint64 nowMs) {
  std::string group;
  int groups = 0;
  const AlertLevel l = policy_.level(nowMs, &group, &groups);
  const QString g = QString::fromStdString(group);
  if (l == level_ && g == levelGroup_ && groups == levelGroups_) return;
  level_ = l;
  levelGroup_ = g;
  levelGroups_ = groups;
  if (icon_) {
    icon_->setIcon(levelIcon(l));
    icon_->setToolTip(tr("Tollgate: %1").arg(levelText()));
  }
  emit levelChanged(l);
}

void AlertTray::clear() {
  policy_.clear();
  refresh(0);
}

}  // namespace tg::ui
