// Fuzz target: one input line of a JSONL batch job, through everything the job does with its bytes:
// parseJobLine (a request or an error naming the field), the rejects-file line built from the error and
// the raw line (putBytes, SecretRegistry::dumpRedacted), and the results-file line of a Result whose
// body, id and error message are the input (resultToJson: the body parsed as JSON, else text, else base64).
// Never an exception or abort: the job reports a bad line and goes on with the next.
#include "jsonl_job.h"
#include "secret.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto request = tg::parseJobLine(line, &error);
  // A good line is rejected too when its id repeats; the error then quotes the id.
  const std::string rejected =
      tg::rejectLine(1, request ? "duplicate id \"" + request->id + "\"" : error, line);
  (void)rejected;

  tg::Result r;
  r.id = request ? request->id : line;
  r.group = request ? request->group : line;
  r.tier = request ? request->tier : tg::Tier::P1;
  r.status = 200;
  r.attempts = 1;
  r.body = line;  // an upstream body is outside bytes just like a job line
  const std::string ok = tg::SecretRegistry::dumpRedacted(tg::resultToJson(r));
  r.status = 500;
  r.error = tg::ErrorKind::Http;
  r.errorMessage = line;
  const std::string failed = tg::SecretRegistry::dumpRedacted(tg::resultToJson(r));
  (void)ok;
  (void)failed;
  return 0;
}
