#include "line_file_writer.h"

#include "log.h"

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <mutex>
#include <stdexcept>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace tg {
namespace {
constexpr auto kLockWait = std::chrono::seconds(2);
}  // namespace

struct LineFileWriter::State {
  struct Item {
    std::string line;  // with its '\n'; empty for a sync
    Done done;
    bool sync = false;
  };

  std::string path;
  int fd = -1;
  mutable std::mutex mutex;
  std::condition_variable cv;
  std::deque<Item> queue;
  bool closing = false;
  std::string error;
  std::int64_t lost = 0;

  ~State() {
    if (fd >= 0) ::close(fd);
  }

  void fail(const std::string& what, int err) {
    std::lock_guard lock(mutex);
    ++lost;
    if (!error.empty()) return;  // one log line for a full disk, not one per result
    error = path + ": " + what + ": " + std::strerror(err);
    logError("job", error);
  }

  bool writeAll(const std::string& buf) {
    const off_t start = ::lseek(fd, 0, SEEK_END);  // -1 for a pipe or a device: nothing to take back there
    const char* p = buf.data();
    std::size_t left = buf.size();
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        // A line cut short (the disk filled mid-line) would stay torn in the middle of the file for good: the
        // next line that fits lands right after it, and a resume cuts only a torn last line. Take it back.
        if (start >= 0 && left < buf.size() && ::ftruncate(fd, start) != 0)
          logError("job", path + ": cannot take back a line cut short: " + std::strerror(errno));
        fail("cannot write", err);
        return false;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    return true;
  }

  bool sync() {
    // Pipes, sockets and character devices have nothing to sync.
    if (::fsync(fd) == 0 || errno == EINVAL || errno == EROFS) return true;
    const int err = errno;
    std::lock_guard lock(mutex);
    if (error.empty()) {
      error = path + ": cannot sync: " + std::strerror(err);
      logError("job", error);
    }
    return false;
  }

  static void run(const std::shared_ptr<State>& self) {
    State& s = *self;
    for (;;) {
      std::deque<Item> batch;
      {
        std::unique_lock lock(s.mutex);
        s.cv.wait(lock, [&] { return !s.queue.empty() || s.closing; });
        if (s.queue.empty()) break;  // closing and drained
        batch.swap(s.queue);
      }
      for (Item& item : batch) {
        const bool ok = item.sync ? s.sync() : s.writeAll(item.line);
        if (item.done) item.done(ok);
      }
    }
    s.sync();
    const int closed = ::close(s.fd), err = errno;
    s.fd = -1;
    std::lock_guard lock(s.mutex);
    if (closed != 0 && s.error.empty()) {
      s.error = s.path + ": cannot close: " + std::strerror(err);
      logError("job", s.error);
    }
    if (s.lost > 0) logError("job", s.path + ": " + std::to_string(s.lost) + " line(s) could not be written");
  }
};

LineFileWriter::LineFileWriter(std::string path, bool exclusive) : s_(std::make_shared<State>()) {
  s_->path = std::move(path);
  s_->fd = ::open(s_->path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (s_->fd < 0) throw std::runtime_error(s_->path + ": cannot open for writing: " + std::strerror(errno));
  struct stat st {};
  // Not a pipe or a device: two jobs may well both write to /dev/null or a terminal.
  if (exclusive && ::fstat(s_->fd, &st) == 0 && S_ISREG(st.st_mode)) {
    // A job just replaced (the dashboard reopening the same file) closes its files on its writer thread a moment
    // after it is gone: waited for, up to kLockWait, before the file counts as another job's.
    const auto until = std::chrono::steady_clock::now() + kLockWait;
    int locked = -1, err = 0;
    while ((locked = ::flock(s_->fd, LOCK_EX | LOCK_NB)) != 0 && (err = errno) == EWOULDBLOCK &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (locked != 0 && err == EWOULDBLOCK) {
      ::close(s_->fd);
      s_->fd = -1;
      throw std::runtime_error(s_->path + ": another job is writing it (a second run of the same job, or one "
                                          "still finishing); one job per results file");
    }
    // A filesystem without locks (some FUSE or CIFS mounts) is no reason to refuse the job.
    if (locked != 0) logWarn("job", s_->path + ": cannot lock (" + std::strerror(err) + "); going on without");
  }
  std::thread([s = s_] { State::run(s); }).detach();
}

LineFileWriter::~LineFileWriter() {
  std::lock_guard lock(s_->mutex);
  s_->closing = true;
  s_->cv.notify_one();
}

void LineFileWriter::append(std::string line, Done done) {
  line += '\n';
  std::lock_guard lock(s_->mutex);
  s_->queue.push_back({std::move(line), std::move(done), false});
  s_->cv.notify_one();
}

void LineFileWriter::syncThen(Done then) {
  std::lock_guard lock(s_->mutex);
  s_->queue.push_back({{}, std::move(then), true});
  s_->cv.notify_one();
}

const std::string& LineFileWriter::path() const { return s_->path; }

std::string LineFileWriter::error() const {
  std::lock_guard lock(s_->mutex);
  return s_->error;
}

std::int64_t LineFileWriter::linesLost() const {
  std::lock_guard lock(s_->mutex);
  return s_->lost;
}

}  // namespace tg
