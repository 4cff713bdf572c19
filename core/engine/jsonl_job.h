// A JSONL batch job: one request per input line, one result per output line, resumable.
//
// Input line: {"id": "r1", "group": "batch", "tier": "P2", "method": "POST", "url": "/v1/chat/completions",
//              "headers": {"X-Trace": "1"}, "body": {...} | "raw text", "max_tokens": 256, "deadline": 30}
// Result line: {"id", "group", "tier", "status", "ok", "attempts", "latency_ms", "wait_ms", "total_ms",
//               "tokens", "body" (JSON when it parses, else text) | "error", "message"}
//
// Re-running the same job resumes: ids already in the results file are skipped; with `retryFailed`, an id whose
// last row is a failure that may pass on another try (`worthRetrying`: shed, breaker, 429s or a daily quota, a
// network error, a timeout, an HTTP 408 or 5xx) is sent again and its new row appended below the old one (the
// last row of an id is its result). A 4xx or a config error would fail again and stays. Results are appended one
// whole line per write(2) with O_APPEND by a writer thread of their own (the engine thread only queues
// them, so a slow disk or an unread pipe never stalls it), and a torn last line left by a killed process is
// cut off on the next start, so a kill -9 loses no result and duplicates none (a retried id's rows are its tries,
// not duplicates). A malformed input line is reported
// with its line number (on stderr and in the rejects file) and the rest of the job continues.
#pragma once

#include "engine.h"
#include "line_file_writer.h"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace tg {

struct JobProgress {
  std::int64_t totalLines = 0; // lines in the input file (counted at start; 0 for a pipe, read only once)
  std::int64_t lines = 0;      // input lines read so far
  std::int64_t skipped = 0;    // already in the results file (resume)
  std::int64_t retried = 0;    // in the results file as a failure worth retrying, sent again (retryFailed)
  std::int64_t rejected = 0;   // malformed lines
  std::int64_t submitted = 0;
  std::int64_t succeeded = 0;
  std::int64_t failed = 0;
  bool inputDone = false;      // the feeder is done: the whole input read, or stopped (cancel, a write failure)
  bool readToEnd = false;      // the whole input was read
  std::int64_t cancelled = 0;  // submitted, then cancelled by an engine stop: no result written (the resume redoes)
  bool finished = false;       // input done (or the feeder stopped), every submitted request's result written,
                               // both files synced
  std::string writeError;      // the first failure writing the results or rejects file (names the file)
  std::int64_t done() const { return succeeded + failed; }
  // Every line has its result or reject on disk: what "finished" alone does not say, since a stop ends the job
  // too (its cancelled requests end it as results do).
  bool complete() const { return finished && readToEnd && cancelled == 0 && writeError.empty(); }
};

// Parses one input line. Returns the request or an error text naming the field.
std::optional<Request> parseJobLine(const std::string& line, std::string* error);
nlohmann::json resultToJson(const Result& r);
// A result row (as resultToJson writes it) that was a failure another try may pass: shed, circuit_open,
// rate_limited, quota_exhausted, network, timeout, or http with status 408 or >= 500.
bool worthRetrying(const nlohmann::json& row);
// The rejects-file line (redacted, no newline) for a bad input line: its number, the error, the raw bytes.
std::string rejectLine(std::int64_t lineNo, const std::string& error, const std::string& line);

class JsonlJob {
 public:
  struct Options {
    std::string input;
    std::string results;         // default: <input>.results.jsonl
    std::string rejects;         // default: <input>.rejects.jsonl; for a pipe, <results>.rejects.jsonl
    int maxOutstanding = 20000;  // submitted but unfinished; keeps queues bounded on huge inputs
    std::function<void(const Result&)> observer;  // every result (engine thread), e.g. a RunReport
    bool retryFailed = false;    // a resume sends again the ids whose last result is worthRetrying
  };

  // Thread-safe after construction. The engine must outlive the job.
  JsonlJob(Engine& engine, Options opts);
  // Stops feeding and returns without waiting: requests already in the engine still complete, and their
  // results are still written (the files stay open until the last one is in).
  ~JsonlJob();

  // Opens files (throws std::runtime_error naming the file on failure), scans results for resume,
  // then feeds the engine from a background thread.
  void start();
  bool waitFinished(double timeoutS);  // true when every request has a result
  void cancel();                       // stops feeding; already submitted requests still complete
  void setPaused(bool paused);         // stops/resumes feeding; what is queued in the engine goes on
  bool paused() const { return s_->paused; }
  JobProgress progress() const;
  const Options& options() const { return opts_; }

 private:
  // What result callbacks touch: owned jointly by the job and every request still in the engine.
  // The last owner may be the engine thread or a writer thread; neither blocks on destruction.
  struct Shared : std::enable_shared_from_this<Shared> {
    std::function<void(const Result&)> observer;
    std::unique_ptr<LineFileWriter> results;
    std::unique_ptr<LineFileWriter> rejects;  // opened at the first reject (under `mutex`), null until then
    std::string rejectsError;                 // it could not be opened
    std::mutex mutex;
    std::condition_variable cv;
    JobProgress progress;
    std::int64_t outstanding = 0;  // submitted and not yet written (or cancelled)
    // Per group and tier (each has its own queue), submitted and not yet answered.
    std::map<std::string, std::array<std::int64_t, kTierCount>> inEngine;
    // Per group, how fast it answers: when its results of the last seconds came, and its smoothed latency. They
    // size how much of the job waits in its queue (JsonlJob::capFor).
    struct Pace {
      std::deque<std::chrono::steady_clock::time_point> answeredAt;
      std::chrono::steady_clock::time_point firstSent{};  // the job's first request to the group
      double latencyS = 0;
    };
    std::map<std::string, Pace> pace;
    // Id -> engine handle (0 until submit returns) of every request still in the engine: a results file that
    // cannot be written cancels them (sent, each would be paid for and lost).
    std::unordered_map<std::string, RequestHandle> handles;
    bool finishing = false;
    std::atomic<bool> cancel{false};
    std::atomic<bool> paused{false};
    std::atomic<bool> writeFailed{false};  // a result could not be written: the feeder stops
    void onResult(const Result& r);      // engine thread: queues the line, never blocks
    void onWritten(bool ok);             // results writer thread
    // Caller holds `mutex`. Once the input is done and nothing is outstanding: sync both files, then finish.
    void finishIfDone();
  };
  void feed();
  // Caller holds s_->mutex. At most this many of the job's requests in the engine for the group's tier: what the
  // group answers in its requests' round trip plus half the tier's max_wait_s (its queue's wait stays well
  // inside the deadline that would shed them), no more than the queue takes; before any answer, its concurrency.
  // A job of 200 lines fed at once to a group answering 10/s had 150 shed after 5 s queued (max_wait_s 5),
  // written as failures that every resume skipped.
  // A line with its own "deadline" shorter than max_wait_s is fed against that one.
  std::int64_t capFor(const std::string& group, std::size_t tier, double lineDeadlineS = 0);
  void cancelInEngine(const std::string& why);  // every request of the job still in the engine

  Engine& engine_;
  Options opts_;
  // Per group and tier, at most this many in the engine: the queue's capacity (or maxOutstanding). Fed past it, a
  // job of 200,000 lines had 191,362 shed "queue full" at once, written as results, and so skipped by every resume.
  std::array<std::int64_t, kTierCount> tierCap_{};
  bool resultsGiven_, rejectsGiven_;  // not the defaults next to the input
  std::unordered_set<std::string> done_;
  std::unordered_set<std::string> retry_;  // failed before and worth retrying (retryFailed): not skipped
  std::unordered_set<std::size_t> rejectedBefore_;  // hashes of the rejects file's rows at start
  std::shared_ptr<Shared> s_ = std::make_shared<Shared>();
  std::thread feeder_;
};

}  // namespace tg
