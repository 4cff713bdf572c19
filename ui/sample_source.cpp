#include "sample_source.h"

namespace tg::ui {

SampleSource::~SampleSource() = default;

std::vector<Sample> SampleSource::samples(const std::string& group, EpochMs fromMs, EpochMs toMs) const {
  std::vector<Sample> out;
  forEachSample(group, fromMs, toMs, [&](const Sample& s) { out.push_back(s); });
  return out;
}

}  // namespace tg::ui
