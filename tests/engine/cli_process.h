// Runs the tollgate binary CTest names (TOLLGATE_BIN) as a child process, for the command-line tests.
#pragma once

#include <QByteArray>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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
                       const QByteArray& input = {}, const QProcessEnvironment& env = {}) {
  QProcess p;
  if (!env.isEmpty()) p.setProcessEnvironment(env);
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

// A TCP socket listening on a loopback port the kernel chose: its fd (the caller closes it) and `*port`, 0 when
// it could not bind.
inline int listeningLoopbackSocket(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  *port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd, 8) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    *port = ntohs(a.sin_port);
  return fd;
}

// A loopback TCP port that was free a moment ago, for a server that cannot report the one it bound (nginx,
// redis-server).
inline int freePort() {
  int port = 0;
  const int fd = listeningLoopbackSocket(&port);
  if (fd >= 0) ::close(fd);
  return port;
}

// Whether something accepts connections on 127.0.0.1:port now.
inline bool listening(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// Waits until the server `proc` started listens on loopback `port` (at most timeoutMs): true once something
// listens there and `proc` is still running a moment later. A port freePort() found free can be taken before
// the server binds it; the server then exits ("Address already in use") while the other process answers there,
// so a connection alone proves nothing. False when `proc` exited: start it again on another port.
inline bool serverListening(QProcess& proc, int port, int timeoutMs = 5000) {
  for (int waited = 0; waited < timeoutMs && !listening(port); waited += 20)
    if (proc.state() == QProcess::NotRunning || proc.waitForFinished(20)) return false;
  return listening(port) && proc.state() == QProcess::Running && !proc.waitForFinished(250);
}

}  // namespace tgtest
