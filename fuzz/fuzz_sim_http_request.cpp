// Fuzz target: tollgate-sim's HTTP/1.1 request parser on a connection's input, pipelined requests one
// after another as SimServer reads them, and every complete request answered by a SimResponder (limits,
// token counts from the body, control endpoints) at a fixed time.
#include "http_request_parser.h"
#include "sim_config.h"
#include "sim_responder.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

const tg::SimConfig& fuzzConfig() {
  static const tg::SimConfig config = tg::SimConfig::fromJson(nlohmann::json::parse(R"({
    "dialect": "openai", "retry_after_format": "ms",
    "groups": {"g": {"limit": 5, "window_s": 60, "tokens_per_window": 1000},
               "t": {"algorithm": "gcra", "limit": 2, "window_s": 1, "burst": 3}}})"), "fuzz");
  return config;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const tg::TimePoint start{};
  tg::SimResponder responder(fuzzConfig(), start);
  for (int i = 0; !in.empty(); ++i) {
    tg::HttpRequest req;
    const auto o = tg::HttpRequestParser::parse(in, req);
    if (o.status != tg::HttpRequestParser::Status::Complete) {
      if (o.status == tg::HttpRequestParser::Status::Error &&
          (o.errorStatus < 400 || o.errorStatus > 599 || o.errorMessage.empty()))
        std::abort();  // an error must carry a status to answer with and a reason
      break;
    }
    if (o.consumed == 0 || o.consumed > in.size()) std::abort();  // would loop or read past the input
    in.remove_prefix(o.consumed);
    const auto now = start + tg::fromSeconds(0.01 * i);
    const tg::SimReply reply = responder.handle(req, now, 1764500000.0 + 0.01 * i);
    responder.onSent(reply, now);
  }
  return 0;
}
