// What `tollgate headers` does: reads one raw HTTP response head and describes, as JSON, what its
// rate-limit headers say and what Tollgate would do about it. The command line (usage, exit codes) lives in
// app/headers_cli.cpp; this takes the parsed options.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace tg {

struct HeadersOptions {
  static constexpr double kDefaultMaxWaitS = 120;  // RetryConfig::maxServerWaitS
  std::optional<int> status;  // the response's HTTP status; beats a status line in the input
  double maxWaitS = kDefaultMaxWaitS;  // longest server-directed wait before the verdict is "exhausted"
};

// An HTTP status: the whole text one integer from 100 to 599, else nothing.
std::optional<int> parseHttpStatus(std::string_view text);

// Input: "Name: value" lines, optionally preceded by a status line ("HTTP/1.1 429 Too Many Requests");
// CRLF, blank lines and folded continuation lines are accepted; a line that is not a header is reported
// on `diag` with its line number and skipped. A later status line starts a new response (redirects,
// 100 Continue), so the last response's headers are the ones read. `nowEpochS` is the local wall clock
// (reset_at = now + reset_in_s). A blank line ends a head: what follows is its body (`curl -i`), skipped up to
// the next status line. Returns the JSON report, indented, with a final newline. Throws std::invalid_argument when
// there is no input at all (an empty or unreadable stdin); never on input bytes.
std::string describeResponseHead(std::istream& in, const HeadersOptions& options, double nowEpochS,
                                 std::ostream& diag);

}  // namespace tg
