// What the subcommands share: the overall usage, the config and the history file.
#include "cli.h"

#include "command_line.h"
#include "json_text.h"
#include "session.h"

#include <QFile>

namespace tg::cli {

const char* const kUsage =
    "usage:\n"
    "  tollgate [gui] [--config FILE] [--history FILE|off] [--lang en|zh_CN|system]\n"
    "               dashboard (default: embedded simulator + demo workload)\n"
    "  tollgate --replay HISTORY.db          replay a history file read-only (e.g. copied from another machine)\n"
    "  tollgate run --headless [--config FILE] [--workload JOB.jsonl] [--results FILE] [--rejects FILE]\n"
    "               [--retry-failed] [--duration S] [--report report.json] [--history FILE|off]\n"
    "               [--max-rps [GROUP=]N] [--max-tpm [GROUP=]N] [--quiet]\n"
    "  tollgate serve [--config FILE] [--listen HOST:PORT] [--duration S] [--history FILE|off] [--quiet]\n"
    "               the local gateway alone: services send their API calls through it\n"
    "  tollgate headers [--status N] [--now EPOCH] [--max-wait S]   < raw response header lines\n"
    "  tollgate probe [--config FILE] --group G [--key NAME] [--rates 5,10,20,...] [--step-s S] [--max-per-step N]\n"
    "               [--stop-429 SHARE] [--method M] [--body JSON] [--path /v1/x]\n"
    "  tollgate history incidents|show|export|check [--db FILE] [--strict] [...]\n"
    "  tollgate replay --incident ID | --from MS --to MS [--db FILE] [--override FILE] [--report out.json]\n"
    "               [--speed K] [--pad S] [--strict]\n"
    "  tollgate check --config FILE [--serve] [--history FILE|off]   read a config as run/serve would, start nothing\n"
    "  tollgate --version\n"
    "Every command answers --help with its own options.\n";

const char* versionText() { return "tollgate " TOLLGATE_VERSION; }

TollgateConfig loadConfig(const std::optional<std::string>& path) {
  if (path) return ConfigLoader::fromFile(*path);
  QFile f(":/tollgate/demo.json");
  if (!f.open(QIODevice::ReadOnly)) throw ConfigError("(embedded demo.json)", "", "cannot open the resource");
  const QByteArray bytes = f.readAll();
  JsonParse j = parseJsonText(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())),
                              kMaxJsonDepth, JsonKeys::Unique);
  if (!j.ok()) throw ConfigError("(embedded demo.json)", "", "invalid JSON: " + j.error);
  return ConfigLoader::fromJson(j.value, "(embedded demo.json)");
}

bool applyRateCeilingFlags(const CommandLine& a, TollgateConfig& c, std::string* error) {
  for (const auto& [flag, value] : a.valuesInOrder()) {
    if (flag != "--max-rps" && flag != "--max-tpm") continue;
    const std::size_t eq = value.rfind('=');
    const std::string group = eq == std::string::npos ? std::string() : value.substr(0, eq);
    const std::optional<double> n = CommandLine::parseNumber(eq == std::string::npos ? value : value.substr(eq + 1));
    if (!n) {
      *error = flag + ": expected [GROUP=]N with N a number from 0 to 1e15, got \"" + value + "\"";
      return false;
    }
    RateCeilingConfig* target = &c.engine.rateCeiling;
    if (eq != std::string::npos) {
      target = nullptr;
      for (auto& g : c.engine.groups)
        if (g.name == group) target = &g.rateCeiling;
      if (!target) {
        *error = flag + ": no group \"" + group + "\" in the config";
        return false;
      }
    }
    (flag == "--max-rps" ? target->requestsPerS : target->tokensPerMin) = *n;
  }
  return true;
}

void applyHistoryFlag(Session& s, const std::optional<std::string>& flag) {
  if (flag && (*flag == "off" || *flag == "none")) s.setHistoryPath({});
  else if (flag) s.setHistoryPath(*flag);
  else if (s.config().historyPath.empty()) s.setHistoryPath(Session::defaultHistoryPath());
}

}  // namespace tg::cli
