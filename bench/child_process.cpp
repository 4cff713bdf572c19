#include "child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace tgbench {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

ChildProcess::~ChildProcess() { stop(); }

void ChildProcess::start(const std::vector<std::string>& argv, const std::string& logPath) {
  if (argv.empty()) throw std::runtime_error("ChildProcess::start: no program given");
  name_ = std::filesystem::path(argv[0]).filename().string();
  logPath_ = logPath;
  const int log = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log < 0) throw std::runtime_error("cannot create " + logPath + ": " + std::strerror(errno));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log);
    throw std::runtime_error("fork for " + name_ + ": " + std::strerror(errno));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec. Its own process group, so a Ctrl-C on the benchmark's
    // terminal reaches the benchmark, which then stops the children in order.
    ::setpgid(0, 0);
    // Ends with the benchmark, however that ends: one killed by `timeout` left its nginx serving for good.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);  // the benchmark was gone before the prctl
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::execv(args[0], args.data());
    const char msg[] = "exec failed\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(log);
  pid_ = pid;
}

std::optional<std::string> ChildProcess::waitForLine(const std::string& prefix, double timeoutS) const {
  const auto t0 = Clock::now();
  while (since(t0) < timeoutS) {
    std::ifstream in(logPath_);
    std::string line;
    while (std::getline(in, line))
      if (line.rfind(prefix, 0) == 0) return line;
    if (!running()) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

bool ChildProcess::running() const {
  if (pid_ <= 0) return false;
  // WNOWAIT: look without reaping, so stop() still gets the status.
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
}

int ChildProcess::stop(double graceS) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  const auto t0 = Clock::now();
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (since(t0) > graceS) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
  return status;
}

long rssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      long kib = -1;
      fields >> kib;
      return kib;
    }
  }
  return -1;
}

namespace {

// ppid and utime + stime in clock ticks from /proc/PID/stat; false when the process is gone.
bool statOf(const std::string& pid, long& ppid, double& ticks) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string text;
  if (!std::getline(in, text)) return false;
  const auto close = text.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return false;
  std::istringstream fields(text.substr(close + 2));
  std::string state;
  long v = 0;
  fields >> state >> ppid;
  for (int field = 5; field <= 13; ++field) fields >> v;  // pgrp .. cmajflt
  long utime = 0, stime = 0;
  fields >> utime >> stime;
  ticks = static_cast<double>(utime + stime);
  return static_cast<bool>(fields);
}

}  // namespace

double cpuSecondsTree(pid_t pid) {
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  double total = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    long ppid = 0;
    double ticks = 0;
    if (!statOf(name, ppid, ticks)) continue;
    if (std::stol(name) == pid || ppid == pid) total += ticks;
  }
  return total / hz;
}

int establishedTo(int port) {
  std::ifstream in("/proc/net/tcp");
  if (!in) return -1;
  char want[16];
  std::snprintf(want, sizeof want, "0100007F:%04X", port);  // 127.0.0.1 in the kernel's hex, then the port
  std::string line;
  std::getline(in, line);  // header
  int n = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if (remote == want && state == "01") ++n;
  }
  return n;
}

int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket for a free port: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const std::string err = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("bind 127.0.0.1:0 for a free port: " + err);
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

bool waitForListener(int port, double timeoutS) {
  const auto t0 = Clock::now();
  while (since(t0) < timeoutS) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TempDir::TempDir(const std::string& stem) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + stem + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
  const std::string p = path_ + "/" + name;
  std::ofstream out(p, std::ios::trunc);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + p);
  return p;
}

}  // namespace tgbench
