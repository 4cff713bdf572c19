#include "fleet_widget.h"

#include "display_text.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tg::ui {
namespace {
enum Column { Instance, Mode, OkPerS, Share, InFlight, R429, ColumnCount };

}  // namespace

FleetWidget::FleetWidget(QWidget* parent)
    : QWidget(parent), mode_(new QLabel(this)), table_(new QTableWidget(0, ColumnCount, this)) {
  setObjectName(QStringLiteral("fleetWidget"));
  mode_->setObjectName(QStringLiteral("fleetMode"));
  mode_->setWordWrap(true);
  table_->setObjectName(QStringLiteral("fleetTable"));
  table_->setHorizontalHeaderLabels({tr("Instance"), tr("Mode"), tr("OK/s"), tr("Share"), tr("In flight"), tr("429s")});
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(mode_);
  layout->addWidget(table_);
}

QString FleetWidget::headline() const { return mode_->text(); }

void FleetWidget::setState(const SharedQuotaSnapshot& s) {
  QString line = tr("Shared quota: %1 · %n instance(s)", nullptr, s.live).arg(sharedModeText(s.mode));
  if (s.mode == "fallback")
    line += tr(" · Redis unreachable or refusing, this instance takes 1/%1 of each shared limit")
                .arg(std::max(1, s.live));
  mode_->setText(line);
  // Redis's own error message (the client library's words, not Tollgate's).
  mode_->setToolTip(s.why.empty() ? QString() : tr("Redis: %1").arg(QString::fromStdString(s.why)));
  double okTotal = 0;
  for (const auto& m : s.members) okTotal += m.okPerS;
  table_->setRowCount(static_cast<int>(s.members.size()));
  for (int r = 0; r < static_cast<int>(s.members.size()); ++r) {
    const FleetMemberSnapshot& m = s.members[static_cast<std::size_t>(r)];
    const QString share = okTotal > 0 ? QStringLiteral("%1%").arg(100 * m.okPerS / okTotal, 0, 'f', 0) : tr("–");
    const QStringList cells{QString::fromStdString(m.instance) + (m.self ? tr(" (this)") : QString()),
                            sharedModeText(m.mode),
                            QString::number(m.okPerS, 'f', 1),
                            share,
                            QString::number(m.inFlight),
                            QString::number(m.r429)};
    for (int c = 0; c < ColumnCount; ++c) {
      auto* item = table_->item(r, c);
      if (!item) {
        item = new QTableWidgetItem;
        table_->setItem(r, c, item);
      }
      item->setText(cells[c]);
      item->setTextAlignment(c == Instance || c == Mode ? Qt::AlignLeft | Qt::AlignVCenter : Qt::AlignRight | Qt::AlignVCenter);
    }
  }
}

}  // namespace tg::ui
