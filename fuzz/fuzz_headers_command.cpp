// Fuzz target: `tollgate headers` fed raw bytes as its stdin would be (runHeadersCommand), with a fixed
// --now so the output does not depend on the clock. Output and errors go to string streams.
#include "headers_command.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::ostringstream out, err;
  static const std::vector<std::string> kArgs = {"--now", "1764500000"};
  tg::runHeadersCommand(kArgs, in, out, err);
  return 0;
}
