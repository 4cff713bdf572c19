#include "event_log_widget.h"

#include "display_text.h"
#include "event_filter_proxy_model.h"
#include "event_log_model.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace tg::ui {

EventLogWidget::EventLogWidget(EventLogModel* model, QWidget* parent)
    : QWidget(parent), model_(model), proxy_(new EventFilterProxyModel(this)), view_(new QTableView(this)),
      groupCombo_(new QComboBox(this)), kindCombo_(new QComboBox(this)), severityCombo_(new QComboBox(this)) {
  proxy_->setSourceModel(model_);
  view_->setObjectName(QStringLiteral("eventTable"));
  view_->setModel(proxy_);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setAlternatingRowColors(true);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 4);
  view_->horizontalHeader()->setStretchLastSection(true);
  view_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  view_->setColumnWidth(EventLogModel::Time, fontMetrics().horizontalAdvance(QStringLiteral("00:00:00.000")) + 16);
  int kindWidth = 0;  // the longest kind name in the language shown
  for (int k = int(EventKind::EngineStart); k <= int(EventKind::SharedQuota); ++k)
    kindWidth = std::max(kindWidth, fontMetrics().horizontalAdvance(eventKindText(EventKind(k))));
  view_->setColumnWidth(EventLogModel::Kind, kindWidth + 16);
  view_->setWordWrap(false);
  // Tab leaves the table (arrows move between rows): it trapped a keyboard-only operator in the log, with the
  // workload, the cards and the replay panel after it out of reach.
  view_->setTabKeyNavigation(false);
  view_->setAccessibleName(tr("Events"));

  groupCombo_->setAccessibleName(tr("Filter by group"));
  kindCombo_->setAccessibleName(tr("Filter by kind"));
  severityCombo_->setAccessibleName(tr("Filter by severity"));
  groupCombo_->setObjectName(QStringLiteral("eventGroupFilter"));
  groupCombo_->addItem(tr("All groups"), QString());
  kindCombo_->setObjectName(QStringLiteral("eventKindFilter"));
  kindCombo_->addItem(tr("All kinds"), -1);
  for (int k = int(EventKind::EngineStart); k <= int(EventKind::SharedQuota); ++k) {
    kindCombo_->addItem(eventKindText(EventKind(k)), k);
  }
  severityCombo_->setObjectName(QStringLiteral("eventSeverityFilter"));
  severityCombo_->addItem(tr("Info and up"), int(Severity::Info));
  severityCombo_->addItem(tr("Warnings and errors"), int(Severity::Warn));
  severityCombo_->addItem(tr("Errors"), int(Severity::Error));

  auto* filters = new QHBoxLayout;
  auto* label = new QLabel(tr("Fil&ter:"), this);
  label->setBuddy(groupCombo_);
  filters->addWidget(label);
  filters->addWidget(groupCombo_);
  filters->addWidget(kindCombo_);
  filters->addWidget(severityCombo_);
  filters->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(filters);
  layout->addWidget(view_, 1);
  // In the order they are seen: the filters above the table came after it.
  setTabOrder(groupCombo_, kindCombo_);
  setTabOrder(kindCombo_, severityCombo_);
  setTabOrder(severityCombo_, view_);

  connect(groupCombo_, &QComboBox::currentIndexChanged, this,
          [this](int i) { proxy_->setGroupFilter(groupCombo_->itemData(i).toString()); });
  connect(kindCombo_, &QComboBox::currentIndexChanged, this, [this](int i) {
    const int k = kindCombo_->itemData(i).toInt();
    proxy_->setKindFilter(k < 0 ? std::nullopt : std::optional<EventKind>(EventKind(k)));
  });
  connect(severityCombo_, &QComboBox::currentIndexChanged, this,
          [this](int i) { proxy_->setMinSeverity(Severity(severityCombo_->itemData(i).toInt())); });
}

void EventLogWidget::setGroups(const QStringList& groups) {
  const QString current = groupCombo_->currentData().toString();
  QStringList existing;
  for (int i = 1; i < groupCombo_->count(); ++i) existing << groupCombo_->itemData(i).toString();
  if (existing == groups) return;
  groupCombo_->blockSignals(true);
  while (groupCombo_->count() > 1) groupCombo_->removeItem(1);
  const QString header = view_->model()->headerData(EventLogModel::Group, Qt::Horizontal).toString();
  int groupWidth = fontMetrics().horizontalAdvance(header);
  for (const QString& g : groups) {
    groupCombo_->addItem(g, g);
    groupWidth = std::max(groupWidth, fontMetrics().horizontalAdvance(g));
  }
  // The longest group name, up to 40 characters' width ("embeddings-02" and "-10" both showed "embeddings-...").
  view_->setColumnWidth(EventLogModel::Group, std::min(groupWidth, fontMetrics().averageCharWidth() * 40) + 16);
  const int idx = groupCombo_->findData(current);
  groupCombo_->setCurrentIndex(idx < 0 ? 0 : idx);
  groupCombo_->blockSignals(false);
  proxy_->setGroupFilter(groupCombo_->currentData().toString());
}

bool EventLogWidget::selectEvent(qint64 tsMs, const QString& group) {
  const auto find = [&]() -> QModelIndex {
    for (int r = 0; r < proxy_->rowCount(); ++r) {
      const QModelIndex i = proxy_->index(r, 0);
      if (i.data(EventLogModel::TimeMsRole).toLongLong() == tsMs &&
          (group.isEmpty() || i.data(EventLogModel::GroupRole).toString() == group))
        return i;
    }
    return {};
  };
  QModelIndex at = find();
  if (!at.isValid()) {
    groupCombo_->setCurrentIndex(0);
    kindCombo_->setCurrentIndex(0);
    severityCombo_->setCurrentIndex(0);
    at = find();
  }
  if (!at.isValid()) return false;
  view_->selectRow(at.row());
  view_->scrollTo(at, QAbstractItemView::PositionAtCenter);
  return true;
}

}  // namespace tg::ui
