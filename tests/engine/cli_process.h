// Runs the tollgate binary CTest names (TOLLGATE_BIN) as a child process, for the command-line tests.
#pragma once

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>

#include <fstream>
#include <string>

namespace tgtest {

inline QString bin() { return QString::fromLocal8Bit(qgetenv("TOLLGATE_BIN")); }

inline void writeFile(const QString& path, const std::string& bytes) {
  std::ofstream out(path.toStdString(), std::ios::binary);
  out << bytes;
}

// The exit code; -1 did not start, -2 still running after two minutes (killed), -3 killed by a signal
// (an abort or a sanitizer report is never mistaken for an exit code).
inline int runTollgate(const QStringList& args, QByteArray* out = nullptr, QByteArray* err = nullptr,
                       const QByteArray& input = {}) {
  QProcess p;
  p.start(bin(), args);
  if (!p.waitForStarted(5000)) return -1;
  if (!input.isEmpty()) p.write(input);
  p.closeWriteChannel();
  if (!p.waitForFinished(120000)) {
    p.kill();
    return -2;
  }
  if (out) *out = p.readAllStandardOutput();
  if (err) *err = p.readAllStandardError();
  return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -3;
}

}  // namespace tgtest
