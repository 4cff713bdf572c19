#include "incident_report.h"

#include "time_text.h"

#include <cmath>
#include <sstream>

namespace tg {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// Table cells: a pipe would end the cell, a newline the row.
std::string cell(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string formatTime(EpochMs ms) { return formatUtc(ms, UtcStyle::DateTime); }

}  // namespace

std::string IncidentReport::markdown() const {
  std::ostringstream md;
  md << "# " << title << "\n\n";
  md << "- Window: " << formatTime(fromMs) << " – " << formatTime(toMs) << " UTC ("
     << (toMs - fromMs) / 1000 << " s)\n";
  if (!source.empty()) md << "- History file: `" << source << "`\n";
  if (incident) {
    const Incident& i = *incident;
    md << "- Incident " << i.id << ": " << formatTime(i.startMs) << " – " << formatTime(i.endMs) << " UTC, "
       << i.durationMs() / 1000 << " s\n";
    md << "- Groups: " << join(i.groups, ", ") << "\n";
    md << "- Reasons: " << join(i.reasons, ", ") << "\n";
    md << "- Peak 429/s: " << std::round(i.peak429PerS * 10) / 10 << "; 429s: " << i.total429 << "; shed: " << i.shed
       << "\n";
    md << "- Operator actions: " << i.operatorActions.size() << "\n";
  }
  int actions = 0;
  for (const auto& e : events) actions += e.kind == EventKind::OperatorAction;
  md << "- Events in the window: " << events.size() << " (operator actions: " << actions << ")\n\n";

  md << "## Timeline\n\n";
  if (events.empty()) md << "No events in this window.\n";
  else {
    md << "| Time (UTC) | Kind | Group | What |\n|---|---|---|---|\n";
    for (const auto& e : events) {
      const bool op = e.kind == EventKind::OperatorAction;
      md << "| " << formatTime(e.tsMs) << " | " << (op ? "**" : "") << eventKindName(e.kind) << (op ? "**" : "")
         << " | " << cell(e.group.empty() ? "–" : e.group) << " | " << cell(e.message) << " |\n";
    }
  }
  if (!images.empty()) {
    md << "\n## Charts\n\n";
    for (const auto& [caption, file] : images) md << "### " << caption << "\n\n![" << caption << "](" << file << ")\n\n";
  }
  return md.str();
}

}  // namespace tg
