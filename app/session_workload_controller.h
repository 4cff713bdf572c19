// The dashboard's workload panel over a Session: the config's synthetic profile or a JSONL job.
// UI thread only.
#pragma once

#include "workload_controller.h"

#include <QElapsedTimer>

namespace tg {
class Session;
}

namespace tg::ui {

class SessionWorkloadController : public WorkloadController {
  Q_OBJECT
 public:
  explicit SessionWorkloadController(Session& session, QObject* parent = nullptr);

  QStringList profiles() const override;
  bool startProfile(const QString& profile) override;
  bool startFile(const QString& jsonlPath) override;
  void setPaused(bool paused) override;
  void cancel() override;
  WorkloadProgress progress() const override;

 private:
  Session& session_;
  QString name_;
  QString error_;
  bool cancelled_ = false;
  mutable qint64 lastDone_ = 0;
  mutable double rate_ = 0;
  mutable QElapsedTimer rateClock_;
};

}  // namespace tg::ui
