#include "synthetic_workload.h"

#include "json_text.h"

#include <chrono>

namespace tg {

double WorkloadStream::rateAt(double t) const {
  if (t < 0) return 0;
  if (shape == "ramp") {
    if (rampS <= 0 || t >= rampS) return toRate;
    return rate + (toRate - rate) * t / rampS;
  }
  if (shape == "step") return t >= atS ? stepRate : rate;
  if (shape == "burst") return (t >= burstAtS && t < burstAtS + burstS) ? rate + burstRate : rate;
  return rate;
}

WorkloadProfile WorkloadProfile::fromJson(const nlohmann::json& j, const std::string& file, const std::string& path) {
  WorkloadProfile p;
  JsonObjectReader r(j, file, path);
  p.durationS = r.number("duration_s", 0, 0, 365 * 86400.0);
  const auto* streams = r.child("streams");
  if (!streams || !streams->is_array() || streams->empty()) r.fail("streams", "expected a non-empty array of streams");
  for (std::size_t i = 0; i < streams->size(); ++i) {
    JsonObjectReader s((*streams)[i], file, path + "/streams/" + std::to_string(i));
    WorkloadStream w;
    w.group = s.requiredString("group");
    const std::string tier = s.string("tier", "P1", {"P0", "P1", "P2"});
    w.tier = *parseTier(tier);
    w.shape = s.string("shape", "constant", {"constant", "ramp", "step", "burst"});
    w.rate = s.number("rate", 1, 0, 1e6);
    w.toRate = s.number("to_rate", w.rate, 0, 1e6);
    w.rampS = s.number("ramp_s", 60, 0.001, 1e7);
    w.atS = s.number("at_s", 0, 0, 1e7);
    w.stepRate = s.number("step_rate", w.rate, 0, 1e6);
    w.burstAtS = s.number("burst_at_s", 0, 0, 1e7);
    w.burstS = s.number("burst_s", 0, 0, 1e7);
    w.burstRate = s.number("burst_rate", 0, 0, 1e6);
    w.path = s.string("path", w.path);
    if (w.path.empty() || w.path[0] != '/') s.fail("path", "expected a path starting with /");
    w.promptBytes = s.integer("prompt_bytes", w.promptBytes, 0, 10000000);
    w.maxTokens = s.integer("max_tokens", w.maxTokens, 0, 10000000);
    w.deadlineS = s.number("deadline_s", 0, 0, 1e7);
    s.finish();
    p.streams.push_back(std::move(w));
  }
  r.finish();
  return p;
}

SyntheticWorkload::SyntheticWorkload(Engine& engine, WorkloadProfile profile)
    : engine_(engine), profile_(std::move(profile)) {}

SyntheticWorkload::~SyntheticWorkload() { stop(); }

void SyntheticWorkload::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void SyntheticWorkload::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void SyntheticWorkload::run() {
  using namespace std::chrono;
  const auto start = steady_clock::now();
  std::vector<double> carry(profile_.streams.size(), 0.0);
  std::uint64_t seq = 0;
  auto last = start;
  double active = 0;  // seconds of unpaused time: the profile's clock
  while (!stop_) {
    std::this_thread::sleep_for(milliseconds(20));  // the generator's own thread, not the engine loop
    const auto now = steady_clock::now();
    const double dt = duration<double>(now - last).count();
    last = now;
    if (paused_) continue;
    active += dt;
    if (profile_.durationS > 0 && active >= profile_.durationS) break;
    for (std::size_t i = 0; i < profile_.streams.size(); ++i) {
      const WorkloadStream& s = profile_.streams[i];
      carry[i] += s.rateAt(active) * dt;
      while (carry[i] >= 1.0) {
        carry[i] -= 1.0;
        Request r;
        r.id = "syn-" + std::to_string(++seq);
        r.group = s.group;
        r.tier = s.tier;
        r.url = s.path;
        r.maxTokens = s.maxTokens;
        r.deadlineS = s.deadlineS;
        r.body = dumpJson(nlohmann::json{{"model", "sim"}, {"max_tokens", s.maxTokens},
                                {"messages", {{{"role", "user"}, {"content", std::string(static_cast<std::size_t>(s.promptBytes), 'x')}}}}});
        ++submitted_;
        engine_.submit(std::move(r), [shared = s_](const Result& res) {
          ++shared->completed;
          if (res.ok()) ++shared->succeeded;
          if (shared->onResult) shared->onResult(res);
        });
      }
    }
  }
  finished_ = true;
}

}  // namespace tg
