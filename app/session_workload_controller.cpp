#include "session_workload_controller.h"

#include "session.h"

#include <QFileInfo>

#include <cmath>

namespace tg::ui {
namespace {
// The config's synthetic workload, the one profile; in the dashboard's language, so read after the translators are in.
QString profileName() { return SessionWorkloadController::tr("synthetic profile (config)"); }
}  // namespace

SessionWorkloadController::SessionWorkloadController(Session& session, QObject* parent)
    : WorkloadController(parent), session_(session) {
  if (session_.synthetic()) name_ = profileName();
  rateClock_.start();
}

QStringList SessionWorkloadController::profiles() const {
  return session_.hasSyntheticProfile() ? QStringList{profileName()} : QStringList{};
}

bool SessionWorkloadController::startProfile(const QString& profile) {
  if (profile != profileName() || !session_.hasSyntheticProfile()) {
    error_ = tr("no such profile: %1").arg(profile);
    return false;
  }
  if (session_.synthetic() && !session_.synthetic()->finished() && !cancelled_) return true;
  session_.restartSynthetic();
  name_ = profileName();
  cancelled_ = false;
  lastDone_ = 0;
  error_.clear();
  emit progressChanged();
  return true;
}

bool SessionWorkloadController::startFile(const QString& jsonlPath) {
  try {
    if (session_.synthetic()) session_.synthetic()->stop();
    JsonlJob::Options o;
    o.input = jsonlPath.toStdString();
    session_.startJob(std::move(o));
    name_ = QFileInfo(jsonlPath).fileName();
    cancelled_ = false;
    lastDone_ = 0;
    error_.clear();
  } catch (const std::exception& e) {
    error_ = QString::fromStdString(e.what());
    emit progressChanged();
    return false;
  }
  emit progressChanged();
  return true;
}

void SessionWorkloadController::setPaused(bool paused) {
  if (JsonlJob* j = session_.job()) j->setPaused(paused);
  else if (SyntheticWorkload* s = session_.synthetic()) s->setPaused(paused);
  emit progressChanged();
}

void SessionWorkloadController::cancel() {
  if (JsonlJob* j = session_.job()) j->cancel();
  else if (SyntheticWorkload* s = session_.synthetic()) s->stop();
  cancelled_ = true;
  emit progressChanged();
}

WorkloadProgress SessionWorkloadController::progress() const {
  WorkloadProgress p;
  p.name = name_;
  p.error = error_;
  if (const JsonlJob* j = const_cast<Session&>(session_).job()) {
    const JobProgress jp = j->progress();
    p.running = !jp.finished && !cancelled_;
    p.paused = j->paused();
    p.total = jp.totalLines - jp.skipped - jp.rejected;
    p.done = jp.done();
    p.ok = jp.succeeded;
    p.failed = jp.failed;
    p.resultsPath = QString::fromStdString(j->options().results);
  } else if (const SyntheticWorkload* s = const_cast<Session&>(session_).synthetic()) {
    p.running = !s->finished() && !cancelled_;
    p.paused = s->paused();
    p.done = s->completed();
    p.ok = s->succeeded();
    p.failed = s->completed() - s->succeeded();
  }
  // Completion rate over the last poll interval (the panel polls about once a second).
  const qint64 ms = rateClock_.restart();
  if (ms > 0 && p.done >= lastDone_) {
    const double inst = static_cast<double>(p.done - lastDone_) * 1000.0 / static_cast<double>(ms);
    rate_ = rate_ <= 0 ? inst : 0.7 * rate_ + 0.3 * inst;
  }
  lastDone_ = p.done;
  p.ratePerS = rate_;
  if (p.total > 0 && rate_ > 0.01) p.etaS = static_cast<double>(p.total - p.done) / rate_;
  return p;
}

}  // namespace tg::ui
