// What the dashboard's controls can ask of the engine. EngineCommands forwards to tg::Engine; tests and
// replay (no engine) use their own implementation or none. Called on the UI thread.
#pragma once

#include "types.h"

#include <string>

namespace tg::ui {

class OperatorCommands {
 public:
  virtual ~OperatorCommands() = default;
  virtual void setGlobalConcurrency(int limit) = 0;
  virtual void setGroupConcurrency(const std::string& group, int limit) = 0;
  // group empty = the ceiling on all groups together; zero rates = none
  virtual void setRateCeiling(const std::string& group, const RateCeilingConfig& ceiling) = 0;
  // group empty = every group
  virtual void setTierPaused(Tier tier, bool paused, const std::string& group) = 0;
  virtual void setGroupPaused(const std::string& group, bool paused) = 0;
  virtual void drainGroup(const std::string& group) = 0;
};

}  // namespace tg::ui
