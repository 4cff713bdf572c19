// `tollgate headers [--status N] [--now EPOCH] [--max-wait S] < response-headers.txt`: the command line
// around describeResponseHead (core/headers/headers_command.h), with its streams passed in for tests.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace tg {

// `args` are the words after "headers". Returns 0, or 2 on a usage error (the message on `err` names the
// bad argument, then the usage); --help prints the usage on `out`.
int runHeadersCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace tg
