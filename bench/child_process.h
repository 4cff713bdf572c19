// A program the benchmark starts as a separate process (tollgate-sim, tollgate serve, nginx), so the processes
// under test share nothing but the machine. Its stdout and stderr go to one log file, which is also where the
// benchmark reads the line a program prints once it listens ("gateway: http://HOST:PORT").
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace tgbench {

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();  // stop()
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts argv[0] (a path, not searched in PATH) with output to `logPath`. Throws std::runtime_error naming
  // the program when fork or exec fails (an exec failure is seen as an exit within waitForLine).
  void start(const std::vector<std::string>& argv, const std::string& logPath);

  // The first log line that starts with `prefix`, waiting up to timeoutS; nullopt when the process exited or
  // the time ran out.
  std::optional<std::string> waitForLine(const std::string& prefix, double timeoutS) const;

  // SIGTERM, then SIGKILL after graceS; returns the exit status as waitpid gives it (-1 when not running).
  int stop(double graceS = 5);

  bool running() const;
  pid_t pid() const { return pid_; }
  const std::string& logPath() const { return logPath_; }
  std::string name() const { return name_; }

 private:
  pid_t pid_ = -1;
  std::string logPath_;
  std::string name_;
};

// VmRSS of a process in KiB from /proc/PID/status; -1 when it cannot be read.
long rssKiB(pid_t pid);

// User + system CPU seconds of a process and its direct children (nginx's master and workers), from /proc.
double cpuSecondsTree(pid_t pid);

// TCP connections on this host in state ESTABLISHED whose remote end is 127.0.0.1:port (IPv4, /proc/net/tcp);
// -1 when the table cannot be read.
int establishedTo(int port);

// A loopback TCP port that was free a moment ago (bound to port 0, then closed): for a program that cannot
// listen on port 0 and report it (nginx).
int freeLoopbackPort();

// Whether something accepts TCP connections on 127.0.0.1:port within timeoutS.
bool waitForListener(int port, double timeoutS);

// A fresh directory under $TMPDIR (or /tmp), removed with its contents by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& stem);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Writes `text` to path()/name and returns the full path; throws std::runtime_error when it cannot.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

}  // namespace tgbench
