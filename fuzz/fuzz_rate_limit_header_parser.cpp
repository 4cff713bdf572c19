// Fuzz target: RateLimitHeaderParser::parse on arbitrary header lists.
// Input: "Name: value" lines separated by LF (a line without a colon is a name with an empty value).
#include "rate_limit_header_parser.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  tg::HeaderList headers;
  while (!in.empty()) {
    const auto eol = in.find('\n');
    const std::string_view line = in.substr(0, eol);
    in = eol == std::string_view::npos ? std::string_view{} : in.substr(eol + 1);
    const auto colon = line.find(':');
    headers.emplace_back(std::string(line.substr(0, colon)),
                         colon == std::string_view::npos ? std::string() : std::string(line.substr(colon + 1)));
  }
  constexpr double kNowEpochS = 1764500000;  // a fixed "now" keeps every run reproducible
  const tg::QuotaReading reading = tg::RateLimitHeaderParser::parse(headers, kNowEpochS);
  (void)reading;
  return 0;
}
