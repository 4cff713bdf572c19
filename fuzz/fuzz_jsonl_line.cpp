// Fuzz target: one input line of a JSONL batch job (parseJobLine), which yields a request or an error
// naming the field. Never an exception: the job reports a bad line and goes on with the next.
#include "jsonl_job.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto request = tg::parseJobLine(line, &error);
  (void)request;
  return 0;
}
