// The dashboard entry point. Until the dashboard lands, "gui" runs the demo headless.
#include "cli.h"

namespace tg::cli {

int guiCommand(int argc, char** argv, const std::vector<std::string>& args) {
  std::vector<std::string> run{"--headless"};
  run.insert(run.end(), args.begin(), args.end());
  return runCommand(run);
}

}  // namespace tg::cli
