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

  // On `onPort`, or a free port (up to three: one found free may be taken before redis-server binds it).
  bool start(QString* why, int onPort = 0, const QStringList& extra = {}) {
    for (int attempt = 0; attempt < (onPort ? 1 : 3); ++attempt) {
      port = onPort ? onPort : freePort();
      proc.setProcessChannelMode(QProcess::MergedChannels);
      proc.start(kRedisServer, QStringList{"--port", QString::number(port), "--bind", "127.0.0.1", "--save", "",
                                           "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"} +
                                   extra);
      if (!proc.waitForStarted(5000)) {
        *why = "redis-server did not start: " + proc.errorString();
        return false;
      }
      if (serverListening(proc, port, 2000)) return true;
      *why = "redis-server is not listening on " + QString::number(port) + ": " +
             QString::fromLocal8Bit(proc.readAll());
      if (proc.state() != QProcess::NotRunning) return false;  // running, yet not listening: no other port helps
    }
    return false;
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
