// A real redis-server for a test: on a free loopback port, no persistence, started by the test and stopped
// by the destructor (or kill()ed mid-test and started again on the same port).
#pragma once

#include "cli_process.h"

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QThread>

namespace tgtest {

inline const char* kRedisServer = "/usr/bin/redis-server";

struct RedisProcess {
  QProcess proc;
  int port = 0;

  bool start(QString* why, int onPort = 0, const QStringList& extra = {}) {
    port = onPort ? onPort : freePort();
    proc.setProcessChannelMode(QProcess::MergedChannels);
    proc.start(kRedisServer, QStringList{"--port", QString::number(port), "--bind", "127.0.0.1", "--save", "",
                                         "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"} +
                                 extra);
    if (!proc.waitForStarted(5000)) {
      *why = "redis-server did not start: " + proc.errorString();
      return false;
    }
    for (int i = 0; i < 100 && !listening(port); ++i) QThread::msleep(20);
    if (!listening(port)) {
      *why = "redis-server is not listening: " + QString::fromLocal8Bit(proc.readAll());
      return false;
    }
    return true;
  }
  void kill() {  // SIGKILL: no shutdown, state lost
    if (proc.state() == QProcess::NotRunning) return;
    proc.kill();
    proc.waitForFinished(5000);
  }
  ~RedisProcess() {
    if (proc.state() == QProcess::NotRunning) return;
    proc.terminate();
    if (!proc.waitForFinished(5000)) proc.kill();
    proc.waitForFinished(2000);
  }
};

}  // namespace tgtest
