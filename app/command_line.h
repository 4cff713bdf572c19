// One subcommand's options, read by Qt's QCommandLineParser with Tollgate's conventions: every command
// answers -h/--help with its own usage; an unknown word or a missing value is an error that names the word
// as the operator typed it; numbers are whole, finite and in range. The exit codes of every command.
//
// Not thread-safe; one per parse.
#pragma once

#include <QCommandLineParser>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tg::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // runtime failure: a file refused, a write failed, the upstream
inline constexpr int kExitUsage = 2;   // usage or configuration error: the message names the argument

class CommandLine {
 public:
  struct Option {
    std::string name;       // "--config"
    std::string valueName;  // "FILE"; empty for a switch
    std::string description;
    // A value option given twice is an error ("--config given twice": which one was meant?), unless its
    // values add up (--max-rps GROUP=N per group) or a later one is documented to replace an earlier one.
    bool repeatable = false;
  };
  enum class Quote { Double, Single };  // how an unknown word is quoted in the error ("x" or 'x')
  enum class Result { Ok, Help, Error };

  // `synopsis`: the usage line(s) printed above the options, e.g. "usage: tollgate run [--config FILE]\n".
  CommandLine(std::string synopsis, std::vector<Option> options, Quote quote = Quote::Double);
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // The words after the subcommand. Help wins only when the words parse.
  Result parse(const std::vector<std::string>& args);
  // parse(), answered the usual way: --help prints the usage on `out` (kExitOk is returned); an error prints
  // "<prefix>: <error>" and the usage on `err` (kExitUsage). Nothing when the command goes on.
  std::optional<int> parseOrAnswer(const std::vector<std::string>& args, const std::string& prefix,
                                   std::ostream& out, std::ostream& err);
  // After Result::Error: "unknown argument \"--x\"", "--config needs a value" or "--config given twice".
  const std::string& error() const { return error_; }
  // The word the error is about, as typed.
  const std::string& offendingWord() const { return offending_; }
  // The synopsis, then one line per option (and -h, --help).
  std::string usage() const;

  // The first value given for `name` ("--config"), byte for byte as typed.
  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;  // every value, in order
  // Every value of every option, in the order the words came: {"--status", "429"}, {"--now", "5"}, ...
  std::vector<std::pair<std::string, std::string>> valuesInOrder() const;
  std::size_t count(const std::string& name) const;  // how often a value option was given
  bool isSet(const std::string& name) const;

  // Every number on the command line is a count, a duration or an epoch time: finite, 0..kMaxNumber, and
  // the whole word ("4abc", "nan", "-1", "1e400" are errors naming the option).
  static constexpr double kMaxNumber = 1e15;
  std::optional<double> number(const std::string& name, std::string* error) const;
  // The same rule for a word that is not a whole option value (e.g. the N of GROUP=N).
  static std::optional<double> parseNumber(const std::string& word);

 private:
  const Option* find(const std::string& word) const;
  void explainFailure(const std::vector<std::string>& args);
  std::string raw(const QString& parsed) const;

  std::string synopsis_;
  std::vector<Option> options_;
  Quote quote_;
  QCommandLineParser parser_;
  std::vector<std::pair<QString, std::string>> rawWords_;  // stand-ins for words that are not UTF-8
  std::string error_;
  std::string offending_;
};

// The whole of `text` as an integer in [1, max], else nothing.
std::optional<int> parsePositiveInt(const std::string& text, int max);

}  // namespace tg::cli
