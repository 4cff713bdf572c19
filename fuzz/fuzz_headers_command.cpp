// Fuzz target: `tollgate headers` fed raw bytes as its stdin would be (describeResponseHead, the logic the
// subcommand calls), with a fixed now so the output does not depend on the clock. Output and line
// diagnostics go to string streams.
#include "headers_command.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::ostringstream diag;
  constexpr double kNow = 1764500000;
  const std::string report = tg::describeResponseHead(in, tg::HeadersOptions{}, kNow, diag);
  (void)report;
  return 0;
}
