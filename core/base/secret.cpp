#include "secret.h"

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <vector>

namespace tg {
namespace {
std::mutex gMutex;
std::vector<std::string>& secrets() {
  static std::vector<std::string> s;
  return s;
}
}  // namespace

std::string keyFingerprint(std::string_view secret) {
  if (secret.empty()) return "k:none";
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  for (unsigned char c : secret) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "k:%08x", static_cast<unsigned>(h >> 32));
  return buf;
}

void SecretRegistry::add(const std::string& secret) {
  if (secret.size() < 4) return;
  std::lock_guard lock(gMutex);
  for (const auto& s : secrets())
    if (s == secret) return;
  secrets().push_back(secret);
}

std::string SecretRegistry::redact(std::string text) {
  std::lock_guard lock(gMutex);
  for (const auto& s : secrets()) {
    const std::string fp = keyFingerprint(s);
    for (auto pos = text.find(s); pos != std::string::npos; pos = text.find(s, pos + fp.size()))
      text.replace(pos, s.size(), fp);
  }
  return text;
}

}  // namespace tg
