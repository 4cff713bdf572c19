// What the workload panel drives: the app's batch runner (JSONL files, synthetic profiles). The app
// implements it; the dashboard only shows progress and forwards start/pause/cancel. UI thread only.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include <limits>

namespace tg::ui {

struct WorkloadProgress {
  bool running = false;
  bool paused = false;
  QString name;           // profile name or file name
  qint64 total = 0;       // 0 = unknown (open-ended profile)
  qint64 done = 0;        // finished, successfully or not
  qint64 ok = 0;
  qint64 failed = 0;
  double ratePerS = 0;    // completions per second, recent
  double etaS = std::numeric_limits<double>::quiet_NaN();  // NaN = unknown
  QString resultsPath;    // where results are written; empty = none yet
  QString error;          // last error starting or running, empty = none
};

class WorkloadController : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;
  ~WorkloadController() override = default;

  virtual QStringList profiles() const = 0;         // synthetic profiles offered in the panel
  virtual bool startProfile(const QString& profile) = 0;
  virtual bool startFile(const QString& jsonlPath) = 0;
  virtual void setPaused(bool paused) = 0;
  virtual void cancel() = 0;
  virtual WorkloadProgress progress() const = 0;

 signals:
  void progressChanged();  // optional: the panel also polls progress() once per second
};

}  // namespace tg::ui
