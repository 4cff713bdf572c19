// The live wiring between tg::Engine and the dashboard: forwards operator commands (actor "operator") and
// installs the engine's listeners so snapshots and events reach a SnapshotBridge.
// The only file in tollgate_ui that calls tg::Engine.
#pragma once

#include "operator_commands.h"

#include <string>

namespace tg {
class Engine;
}

namespace tg::ui {

class SnapshotBridge;

class EngineCommands : public OperatorCommands {
 public:
  // `engine` must outlive this object.
  explicit EngineCommands(Engine& engine, std::string actor = "operator");

  // Installs onSnapshot/onEvent on `engine` (call before Engine::start()). `bridge` must outlive the
  // engine's loop thread (stop the engine before destroying the bridge).
  static void attach(Engine& engine, SnapshotBridge& bridge);

  void setGlobalConcurrency(int limit) override;
  void setGroupConcurrency(const std::string& group, int limit) override;
  void setRateCeiling(const std::string& group, const RateCeilingConfig& ceiling) override;
  void setTierPaused(Tier tier, bool paused, const std::string& group) override;
  void setGroupPaused(const std::string& group, bool paused) override;
  void drainGroup(const std::string& group) override;

 private:
  Engine& engine_;
  std::string actor_;
};

}  // namespace tg::ui
