#include "engine_commands.h"

#include "engine.h"
#include "snapshot_bridge.h"

namespace tg::ui {

EngineCommands::EngineCommands(Engine& engine, std::string actor)
    : engine_(engine), actor_(std::move(actor)) {}

void EngineCommands::attach(Engine& engine, SnapshotBridge& bridge) {
  engine.onSnapshot([&bridge](SnapshotPtr s) { bridge.publishSnapshot(std::move(s)); });
  engine.onEvent([&bridge](const Event& e) { bridge.publishEvent(e); });
}

void EngineCommands::setGlobalConcurrency(int limit) { engine_.setGlobalConcurrency(limit, actor_); }

void EngineCommands::setGroupConcurrency(const std::string& group, int limit) {
  engine_.setGroupConcurrency(group, limit, actor_);
}

void EngineCommands::setRateCeiling(const std::string& group, const RateCeilingConfig& ceiling) {
  engine_.setRateCeiling(group, ceiling, actor_);
}

void EngineCommands::setTierPaused(Tier tier, bool paused, const std::string& group) {
  engine_.setTierPaused(tier, paused, group, actor_);
}

void EngineCommands::setGroupPaused(const std::string& group, bool paused) {
  engine_.setGroupPaused(group, paused, actor_);
}

void EngineCommands::drainGroup(const std::string& group) { engine_.drainGroup(group, actor_); }

}  // namespace tg::ui
