// The replay's scrub bar: the replay range as a strip with incident spans (red) and operator actions
// (blue ticks) marked, and the playhead. Click or drag to move the playhead. UI thread only.
#pragma once

#include "types.h"

#include <QWidget>

#include <utility>
#include <vector>

namespace tg::ui {

class ReplayScrubWidget : public QWidget {
  Q_OBJECT
 public:
  explicit ReplayScrubWidget(QWidget* parent = nullptr);

  void setRange(EpochMs fromMs, EpochMs toMs);
  void setSpans(std::vector<std::pair<EpochMs, EpochMs>> incidentSpans);
  void setMarks(std::vector<EpochMs> operatorActions);
  void setPlayhead(EpochMs tsMs);
  EpochMs playhead() const { return playhead_; }
  EpochMs timeAt(int x) const;
  int xAt(EpochMs tsMs) const;
  QSize sizeHint() const override { return {400, 28}; }
  QSize minimumSizeHint() const override { return {100, 22}; }

 signals:
  void scrubbed(qint64 tsMs);  // the user moved the playhead

 protected:
  void paintEvent(QPaintEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  EpochMs from_ = 0, to_ = 1, playhead_ = 0;
  std::vector<std::pair<EpochMs, EpochMs>> spans_;
  std::vector<EpochMs> marks_;
};

}  // namespace tg::ui
