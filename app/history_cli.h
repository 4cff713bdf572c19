// `tollgate history incidents|show|export|check ...`: the command line around runHistoryAction
// (core/history/history_command.h), with its streams passed in for tests.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tg {

// `args` are the words after the program name, starting with "history" (or with the action):
//   history incidents --db FILE [--id N]
//   history show      --db FILE --from T --to T [--group G] [--points N]
//   history export    --db FILE --from T --to T --format csv|jsonl [--what samples|events|requests] [--out FILE]
//   history check     --db FILE
// Every action also takes --strict (immutable read) and --help. Without --db, `defaultDb` when given.
// Returns 0 on success, 1 when the file is refused or damaged, 2 on a usage error (naming the argument).
int runHistoryCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                      const std::optional<std::string>& defaultDb = std::nullopt);

}  // namespace tg
