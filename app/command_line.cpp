#include "command_line.h"

#include "json_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

namespace tg::cli {
namespace {

const QString kHelp = QStringLiteral("help");

QString bare(const std::string& name) { return QString::fromStdString(name.substr(name.find_first_not_of('-'))); }

}  // namespace

CommandLine::CommandLine(std::string synopsis, std::vector<Option> options, Quote quote)
    : synopsis_(std::move(synopsis)), options_(std::move(options)), quote_(quote) {
  parser_.setSingleDashWordOptionMode(QCommandLineParser::ParseAsCompactedShortOptions);
  for (const auto& o : options_) {
    QCommandLineOption opt(bare(o.name), QString::fromStdString(o.description));
    if (!o.valueName.empty()) opt.setValueName(QString::fromStdString(o.valueName));
    parser_.addOption(opt);
  }
  parser_.addOption(QCommandLineOption({QStringLiteral("h"), kHelp}, QStringLiteral("this help")));
}

CommandLine::Result CommandLine::parse(const std::vector<std::string>& args) {
  error_.clear();
  offending_.clear();
  rawWords_.clear();
  QStringList words{QStringLiteral("tollgate")};  // QCommandLineParser skips the program name
  for (const auto& a : args) {
    if (isValidUtf8(a)) {
      words << QString::fromStdString(a);
    } else {
      // A file name in another encoding must reach the command unchanged: parse a stand-in, map it back.
      const QString standIn = QStringLiteral("\x01raw-word-%1\x01").arg(rawWords_.size());
      rawWords_.emplace_back(standIn, a);
      words << standIn;
    }
  }
  const bool parsed = parser_.parse(words);
  // "--" ends the options for QCommandLineParser; here, like any other stray word, it is an error.
  if (!parsed || !parser_.positionalArguments().isEmpty() || std::find(args.begin(), args.end(), "--") != args.end()) {
    explainFailure(args);
    if (!error_.empty()) return Result::Error;
    if (!parsed) {
      error_ = parser_.errorText().toStdString();
      return Result::Error;
    }
  }
  for (const auto& o : options_) {
    if (!o.valueName.empty() && !o.repeatable && count(o.name) > 1) {
      offending_ = o.name;
      error_ = o.name + " given twice";
      return Result::Error;
    }
  }
  return parser_.isSet(kHelp) ? Result::Help : Result::Ok;
}

std::optional<int> CommandLine::parseOrAnswer(const std::vector<std::string>& args, const std::string& prefix,
                                              std::ostream& out, std::ostream& err) {
  switch (parse(args)) {
    case Result::Help:
      out << usage();
      return kExitOk;
    case Result::Error:
      err << prefix << ": " << error_ << "\n" << usage();
      return kExitUsage;
    case Result::Ok:
      break;
  }
  return std::nullopt;
}

const CommandLine::Option* CommandLine::find(const std::string& word) const {
  for (const auto& o : options_)
    if (o.name == word) return &o;
  return nullptr;
}

// Walks the words the way the parser does and names the first one it could not take, as typed.
void CommandLine::explainFailure(const std::vector<std::string>& args) {
  const auto unknown = [this](const std::string& w) {
    offending_ = w;
    error_ = quote_ == Quote::Double ? "unknown argument \"" + w + "\"" : "unknown argument '" + w + "'";
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (w == "-h" || w == "--help") continue;
    if (w.rfind("--", 0) != 0 || w.size() == 2) return unknown(w);
    const std::size_t eq = w.find('=');
    const Option* o = find(w.substr(0, eq));
    if (!o || (o->valueName.empty() && eq != std::string::npos)) return unknown(w);
    if (o->valueName.empty() || eq != std::string::npos) continue;
    if (i + 1 >= args.size()) {
      offending_ = w;
      error_ = w + " needs a value";
      return;
    }
    ++i;
  }
}

std::string CommandLine::usage() const {
  std::string text = synopsis_;
  std::vector<std::pair<std::string, std::string>> lines;
  for (const auto& o : options_)
    lines.emplace_back(o.name + (o.valueName.empty() ? "" : " " + o.valueName), o.description);
  lines.emplace_back("-h, --help", "this help");
  std::size_t width = 0;
  for (const auto& l : lines) width = std::max(width, l.first.size());
  for (const auto& [left, right] : lines) text += "  " + left + std::string(width - left.size() + 3, ' ') + right + "\n";
  return text;
}

std::string CommandLine::raw(const QString& parsed) const {
  for (const auto& [standIn, bytes] : rawWords_)
    if (standIn == parsed) return bytes;
  return parsed.toStdString();
}

std::optional<std::string> CommandLine::value(const std::string& name) const {
  if (!find(name)) return std::nullopt;  // QCommandLineParser warns about names it does not know
  const QStringList values = parser_.values(bare(name));
  if (values.isEmpty()) return std::nullopt;
  return raw(values.front());
}

std::vector<std::string> CommandLine::values(const std::string& name) const {
  std::vector<std::string> out;
  if (!find(name)) return out;
  for (const QString& v : parser_.values(bare(name))) out.push_back(raw(v));
  return out;
}

std::vector<std::pair<std::string, std::string>> CommandLine::valuesInOrder() const {
  std::vector<std::pair<std::string, std::string>> out;
  std::map<QString, qsizetype> taken;
  // optionNames() lists one entry per occurrence, in order; values(name) the values of each in order.
  for (const QString& n : parser_.optionNames()) {
    const Option* o = find("--" + n.toStdString());
    if (!o || o->valueName.empty()) continue;
    const QStringList all = parser_.values(n);
    qsizetype& next = taken[n];
    if (next < all.size()) out.emplace_back(o->name, raw(all[next++]));
  }
  return out;
}

std::size_t CommandLine::count(const std::string& name) const {
  if (!find(name)) return 0;
  return static_cast<std::size_t>(parser_.values(bare(name)).size());
}

bool CommandLine::isSet(const std::string& name) const { return find(name) && parser_.isSet(bare(name)); }

std::optional<double> CommandLine::number(const std::string& name, std::string* error) const {
  auto v = value(name);
  if (!v) return std::nullopt;
  if (auto d = parseNumber(*v)) return d;
  *error = name + ": expected a number from 0 to 1e15, got \"" + *v + "\"";
  return std::nullopt;
}

std::optional<double> CommandLine::parseNumber(const std::string& word) {
  // from_chars reads the whole word or fails: no leading blanks, no "4abc", no hex; inf/nan are refused below.
  double d = 0;
  const char* first = word.data();
  const char* last = word.data() + word.size();
  const auto [end, ec] = std::from_chars(first, last, d, std::chars_format::general);
  if (!word.empty() && ec == std::errc() && end == last && std::isfinite(d) && d >= 0 && d <= kMaxNumber) return d;
  return std::nullopt;
}

std::optional<int> parsePositiveInt(const std::string& text, int max) {
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n <= 0 || n > max) return std::nullopt;
  return n;
}

}  // namespace tg::cli
