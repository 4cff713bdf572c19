// `tollgate history ...`: list incidents, show a range, export, check a file. Reads only (HistoryReader).
#pragma once

#include "types.h"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tg {

// `args` are the words after the program name, starting with "history" (or with the subcommand):
//   history incidents --db FILE [--id N]
//   history show      --db FILE --from T --to T [--group G] [--points N]
//   history export    --db FILE --from T --to T --format csv|jsonl [--what samples|events|requests] [--out FILE]
//   history check     --db FILE
// Any command also takes --strict (immutable read: nothing is created next to the file).
// T: epoch ms, ISO-8601 UTC (2026-11-29T02:00:00Z, optional .mmm), "now", or relative (-90s, -15m, -1h, -2d).
// Returns 0 on success, 1 when the file is refused or damaged, 2 on a usage error (naming the argument).
int runHistoryCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// Exposed for tests. Relative times count back from nowMs.
std::optional<EpochMs> parseHistoryTime(const std::string& text, EpochMs nowMs);
std::string formatIsoUtc(EpochMs ms);  // 2026-11-29T02:00:00.000Z

}  // namespace tg
