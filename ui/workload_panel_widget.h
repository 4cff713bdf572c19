// Start, pause and cancel a workload (profile or JSONL file) and watch its progress: counts, rate, ETA and
// where results go. Hidden while no WorkloadController is set. UI thread only.
#pragma once

#include <QWidget>

#include <functional>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;

namespace tg::ui {

class WorkloadController;

class WorkloadPanelWidget : public QWidget {
  Q_OBJECT
 public:
  explicit WorkloadPanelWidget(QWidget* parent = nullptr);

  void setController(WorkloadController* controller);  // not owned; null hides the panel
  WorkloadController* controller() const { return controller_; }
  // Replaces the file dialog (tests); returns a path or empty for "cancelled".
  void setFileChooser(std::function<QString(QWidget*)> chooser);

  QString progressText() const;

 public slots:
  void refresh();

 private:
  WorkloadController* controller_ = nullptr;
  std::function<QString(QWidget*)> chooseFile_;
  QComboBox* profiles_;
  QPushButton* start_;
  QPushButton* open_;
  QPushButton* pause_;
  QPushButton* cancel_;
  QProgressBar* bar_;
  QLabel* details_;
  QTimer* poll_;
};

}  // namespace tg::ui
