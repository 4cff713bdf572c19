// `tollgate headers`: reads one raw HTTP response head from a stream and prints, as JSON, what its
// rate-limit headers say and what Tollgate would do about it. The app's main() only dispatches here.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace tg {

// `args` are the arguments after "headers": [--status N] [--now EPOCH] [--max-wait S] (also --opt=value).
// Input: "Name: value" lines, optionally preceded by a status line ("HTTP/1.1 429 Too Many Requests");
// CRLF, blank lines and folded continuation lines are accepted; a line that is not a header is reported
// on `err` with its line number and skipped. A later status line starts a new response (redirects,
// 100 Continue), so the last response's headers are the ones read.
// Returns 0, or 2 on a usage error (the message on `err` names the bad argument).
int runHeadersCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace tg
