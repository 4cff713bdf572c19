// Appends whole lines to one file from a thread of its own, so the threads that produce the lines (the
// engine loop above all, which must never block) only queue them. Used for a job's results and rejects.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tg {

class LineFileWriter {
 public:
  // Runs on the writer thread once the line is in the file (written = true) or could not be written
  // (written = false; the error is logged with the file name and kept in error()).
  using Done = std::function<void(bool written)>;

  // Opens `path` for appending (created 0644); throws std::runtime_error naming the file on failure.
  // `exclusive`: a regular file is also locked (flock) for as long as it is open, and a file another process
  // holds so is refused: two jobs appending to one results file would each send every request (both read it
  // for their resume before either wrote) and leave every id twice.
  explicit LineFileWriter(std::string path, bool exclusive = false);
  // Never blocks: lines still queued are written, the file is fsync'd and closed by the writer thread,
  // which then ends on its own. Safe to run on any thread, the writer's own included (from a Done).
  ~LineFileWriter();
  LineFileWriter(const LineFileWriter&) = delete;
  LineFileWriter& operator=(const LineFileWriter&) = delete;

  // Thread-safe, never blocks on the file. Each line goes out with one write(2) (O_APPEND) plus '\n',
  // in the order queued, exactly once.
  void append(std::string line, Done done = {});
  // Thread-safe, never blocks: after every line queued before it, fsyncs the file, then runs `then`
  // (writer thread) with whether the sync worked. Files that cannot be synced (pipes, devices) count as synced.
  void syncThen(Done then);

  const std::string& path() const;
  // Thread-safe: the first write or sync failure ("<path>: cannot write: No space left on device"), else empty.
  std::string error() const;
  // Thread-safe: lines that could not be written.
  std::int64_t linesLost() const;

 private:
  struct State;
  std::shared_ptr<State> s_;  // shared with the writer thread, which outlives this object when lines remain
};

}  // namespace tg
