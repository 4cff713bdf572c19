#include "group_card_widget.h"

#include "chart_frame_builder.h"
#include "display_text.h"
#include "time_text.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QProgressBar>
#include <QStyle>
#include <QStyleOptionFocusRect>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tg::ui {

namespace {

QString number(double v, int decimals = 0) {
  if (!known(v)) return QStringLiteral("–");
  return QString::number(v, 'f', decimals);
}

QString duration(double s) { return durationText(std::max(0.0, s)); }

// WCAG's relative luminance and the text (black or white) of the higher contrast on `bg`: white on the amber
// half-open badge was 2.4:1 and on the green closed one 3.2:1 (lightness > 0.6 chose it), under the 4.5:1 asked.
QColor textOn(const QColor& bg) {
  auto channel = [](double c) { return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); };
  const double l =
      0.2126 * channel(bg.redF()) + 0.7152 * channel(bg.greenF()) + 0.0722 * channel(bg.blueF());
  const double onWhite = 1.05 / (l + 0.05), onBlack = (l + 0.05) / 0.05;
  return onBlack >= onWhite ? Qt::black : Qt::white;
}

}  // namespace

GroupCardWidget::GroupCardWidget(const QString& group, const QColor& color, QWidget* parent)
    : QFrame(parent), group_(group), gauge_(new QProgressBar(this)), breakerBadge_(new QLabel(this)) {
  setObjectName(QStringLiteral("card_") + group);
  setFrameShape(QFrame::StyledPanel);
  setFocusPolicy(Qt::TabFocus);  // keyboard users can reach it; the accessible description says it all
  setAccessibleName(tr("Group %1").arg(group));

  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(6, 4, 6, 4);
  outer->setSpacing(2);
  auto* header = new QHBoxLayout;
  auto* swatch = new QLabel(this);
  swatch->setFixedSize(12, 12);
  swatch->setAutoFillBackground(true);
  QPalette sp = swatch->palette();
  sp.setColor(QPalette::Window, color);
  swatch->setPalette(sp);
  auto* title = new QLabel(QStringLiteral("<b>%1</b>").arg(group.toHtmlEscaped()), this);
  title->setObjectName(QStringLiteral("title"));
  breakerBadge_->setObjectName(QStringLiteral("breaker"));
  breakerBadge_->setAlignment(Qt::AlignCenter);
  breakerBadge_->setMinimumWidth(72);
  breakerBadge_->setAutoFillBackground(true);
  header->addWidget(swatch);
  header->addWidget(title, 1);
  header->addWidget(breakerBadge_);
  outer->addLayout(header);

  gauge_->setObjectName(QStringLiteral("remaining"));
  gauge_->setRange(0, 1000);
  gauge_->setValue(0);
  gauge_->setTextVisible(true);
  gauge_->setFormat(tr("remaining –"));
  gauge_->setMaximumHeight(18);
  outer->addWidget(gauge_);
  auto* tokens = new QLabel(this);
  tokens->setObjectName(QStringLiteral("tokens"));
  tokens->setVisible(false);
  outer->addWidget(tokens);

  auto* grid = new QGridLayout;
  grid->setHorizontalSpacing(10);
  grid->setVerticalSpacing(1);
  addField(grid, QStringLiteral("reset"), tr("reset in"), 0, 0);
  addField(grid, QStringLiteral("reqRate"), tr("req/s"), 0, 1);
  addField(grid, QStringLiteral("rate429"), tr("429/s"), 1, 0);
  addField(grid, QStringLiteral("p95"), tr("p95"), 1, 1);
  addField(grid, QStringLiteral("inFlight"), tr("in flight"), 2, 0);
  // A row of its own: three queue depths of three digits each overran the right column and were cut.
  addField(grid, QStringLiteral("queue"), tr("queue"), 3, 0, 2);
  outer->addLayout(grid);

  auto* ceiling = new QLabel(this);
  ceiling->setObjectName(QStringLiteral("rateCeiling"));
  ceiling->setVisible(false);
  outer->addWidget(ceiling);
  auto* flags = new QLabel(this);
  flags->setObjectName(QStringLiteral("flags"));
  flags->setVisible(false);
  outer->addWidget(flags);
  auto* wait = new QLabel(this);
  wait->setObjectName(QStringLiteral("waitReason"));
  wait->setWordWrap(true);
  QFont f = wait->font();
  f.setItalic(true);
  wait->setFont(f);
  outer->addWidget(wait);
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
}

void GroupCardWidget::addField(QGridLayout* grid, const QString& name, const QString& caption, int row, int col,
                               int colSpan) {
  auto* l = new QLabel(caption + QStringLiteral(" –"), this);
  l->setObjectName(name);
  grid->addWidget(l, row, col, 1, colSpan);
}

void GroupCardWidget::setState(const GroupSnapshot& g, const Sample* last, EpochMs snapshotMs) {
  auto field = [this](const char* name) { return findChild<QLabel*>(QLatin1String(name)); };

  const auto& req = g.dims[int(Dimension::Requests)];
  const auto& tok = g.dims[int(Dimension::Tokens)];
  if (known(req.remaining) && known(req.limit) && req.limit > 0) {
    gauge_->setValue(int(std::clamp(req.remaining / req.limit, 0.0, 1.0) * 1000));
    gauge_->setFormat(tr("%1 / %2 requests").arg(number(req.remaining), number(req.limit)));
  } else if (known(tok.remaining) && known(tok.limit) && tok.limit > 0) {
    gauge_->setValue(int(std::clamp(tok.remaining / tok.limit, 0.0, 1.0) * 1000));
    gauge_->setFormat(tr("%1 / %2 tokens").arg(number(tok.remaining), number(tok.limit)));
  } else {
    gauge_->setValue(0);
    gauge_->setFormat(known(req.remaining) ? tr("%1 requests left, limit unknown").arg(number(req.remaining))
                                           : tr("remaining unknown"));
  }

  const bool tokensKnown = known(tok.remaining) || known(tok.limit);
  field("tokens")->setText(tr("tokens %1 / %2").arg(number(tok.remaining), number(tok.limit)));
  field("tokens")->setVisible(tokensKnown);

  const EpochMs resetAt = req.resetAtMs ? req.resetAtMs : tok.resetAtMs;
  field("reset")->setText(tr("reset in %1").arg(resetAt ? duration((resetAt - snapshotMs) / 1000.0)
                                                        : QStringLiteral("–")));

  if (last) {
    const double interval = last->intervalS > 0 ? last->intervalS : 1.0;
    const double share = last->sends > 0 ? 100.0 * last->r429 / last->sends : 0.0;
    field("rate429")->setText(tr("429/s %1 (%2%)").arg(number(last->r429 / interval, 1), number(share)));
    field("reqRate")->setText(tr("req/s %1").arg(number(last->sends / interval, 1)));
  } else {
    field("rate429")->setText(tr("429/s –"));
    field("reqRate")->setText(tr("req/s –"));
  }
  field("p95")->setText(tr("p95 %1 ms").arg(number(g.latencyP95Ms)));
  field("inFlight")->setText(tr("in flight %1 / %2").arg(g.inFlight).arg(g.concurrencyLimit));
  field("queue")->setText(tr("queue P0 %1 · P1 %2 · P2 %3")
                              .arg(g.queueDepth[0])
                              .arg(g.queueDepth[1])
                              .arg(g.queueDepth[2]));

  field("rateCeiling")->setText(tr("rate ceiling %1").arg(rateCeilingText(g.rateCeiling)));
  field("rateCeiling")->setVisible(g.rateCeiling.any());

  QStringList flags;
  if (g.paused) flags << tr("group paused");
  for (int t = 0; t < kTierCount; ++t)
    if (g.tierPaused[t] && !g.paused)
      flags << tr("%1 paused").arg(QString::fromLatin1(tierName(Tier(t)).data(), 2));
  if (g.draining) flags << tr("draining");
  field("flags")->setText(flags.join(QStringLiteral(" · ")));
  field("flags")->setVisible(!flags.isEmpty());

  // Worded from the engine's code; a snapshot that carries only core's English (none do now) shows that.
  const QString wait = g.wait.waiting() ? waitReasonText(g.wait) : QString::fromStdString(g.waitReason);
  field("waitReason")->setText(wait.isEmpty() ? QString() : tr("waiting: %1").arg(wait));
  field("waitReason")->setVisible(!wait.isEmpty());

  breaker_ = g.breaker;
  breakerBadge_->setText(breakerStateText(g.breaker));
  // The badge carries its own background and a text color chosen against it, so it reads in any palette.
  QPalette bp = breakerBadge_->palette();
  const QColor bg = ChartFrameBuilder::breakerColor(g.breaker);
  bp.setColor(QPalette::Window, bg);
  bp.setColor(QPalette::WindowText, textOn(bg));
  breakerBadge_->setPalette(bp);
  setToolTip(tr("%1: breaker %2, %3").arg(group_, breakerBadge_->text(), gauge_->format()));
  // What a screen reader says on the card: all it shows (the tooltip, its only words before, left out 429/s,
  // the queue, the waiting reason and the paused tiers).
  QStringList said{tr("breaker %1").arg(breakerBadge_->text()), gauge_->format()};
  for (const char* name : {"tokens", "reset", "reqRate", "rate429", "p95", "inFlight", "queue", "rateCeiling", "flags",
                           "waitReason"})
    if (QLabel* l = field(name); l && !l->isHidden() && !l->text().isEmpty()) said << l->text();
  setAccessibleDescription(said.join(QStringLiteral("; ")));
}

void GroupCardWidget::paintEvent(QPaintEvent* e) {
  QFrame::paintEvent(e);
  if (!hasFocus()) return;  // a card took focus with nothing to show it
  QPainter p(this);
  QStyleOptionFocusRect focus;
  focus.initFrom(this);
  focus.rect = rect().adjusted(2, 2, -2, -2);
  style()->drawPrimitive(QStyle::PE_FrameFocusRect, &focus, &p, this);
}

QString GroupCardWidget::fieldText(const QString& field) const {
  if (field == QLatin1String("remaining")) return gauge_->format();
  if (field == QLatin1String("breaker")) return breakerBadge_->text();
  auto* l = findChild<QLabel*>(field);
  return l ? l->text() : QString();
}

}  // namespace tg::ui
