#include "secret.h"

#include "json_text.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tg {
namespace {
std::mutex gMutex;
// Never destroyed: threads that outlive main() (a JSONL job's detached file writer finishing its last lines)
// may still log, and logging redacts; a destroyed list at exit was a use-after-free (TSan, test_jsonl_job).
std::vector<std::string>& secrets() {
  static auto* s = new std::vector<std::string>;
  return *s;
}
// Of those, the ones held for a while (hold/release) and by how many holders; the rest stay for good.
std::unordered_map<std::string, int>& holds() {
  static auto* h = new std::unordered_map<std::string, int>;
  return *h;
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
  holds().erase(secret);  // held until now: for good from here
  for (const auto& s : secrets())
    if (s == secret) return;
  secrets().push_back(secret);
}

void SecretRegistry::hold(const std::string& secret) {
  if (secret.size() < 4) return;
  std::lock_guard lock(gMutex);
  if (auto h = holds().find(secret); h != holds().end()) {
    ++h->second;
    return;
  }
  if (std::find(secrets().begin(), secrets().end(), secret) != secrets().end()) return;  // registered for good
  secrets().push_back(secret);
  holds().emplace(secret, 1);
}

void SecretRegistry::release(const std::string& secret) {
  std::lock_guard lock(gMutex);
  auto h = holds().find(secret);
  if (h == holds().end() || --h->second > 0) return;
  holds().erase(h);
  auto& list = secrets();
  list.erase(std::remove(list.begin(), list.end(), secret), list.end());
}

namespace {
// Length of an occurrence of `s` at text[i], each of its bytes written as itself or as an encoder may write it:
// JSON's "\/" and "\uXXXX" (PHP escapes every slash, .NET every '+'), or URL encoding's "%XX", any hex case.
// An upstream that echoes the key it was sent writes it so as often as not, and any client decodes it back.
// 0 when there is none.
std::size_t encodedMatch(std::string_view text, std::size_t i, std::string_view s) {
  std::size_t j = i;
  for (char c : s) {
    if (j >= text.size()) return 0;
    const auto byte = static_cast<int>(static_cast<unsigned char>(c));
    if (text[j] == c) {
      ++j;
    } else if (text[j] == '\\' && j + 1 < text.size() && c == '/' && text[j + 1] == '/') {
      j += 2;
    } else if (text[j] == '\\' && j + 1 < text.size() && text[j + 1] == 'u' && hexValue(text, j + 2, 4) == byte) {
      j += 6;
    } else if (text[j] == '%' && hexValue(text, j + 1, 2) == byte) {
      j += 3;
    } else {
      return 0;
    }
  }
  return j - i;
}

std::string redactWith(const std::vector<std::string>& list, std::string text) {
  for (const auto& s : list) {
    const std::string fp = keyFingerprint(s);
    const char starts[] = {s.front(), '\\', '%', '\0'};
    std::string out;
    std::size_t copied = 0;
    for (std::size_t p = text.find_first_of(starts); p != std::string::npos; p = text.find_first_of(starts, p)) {
      const std::size_t len = encodedMatch(text, p, s);
      if (len == 0) {
        ++p;
        continue;
      }
      out.append(text, copied, p - copied);
      out += fp;
      copied = p += len;
    }
    if (copied == 0 && out.empty()) continue;  // nothing of it here: the text as it was
    out.append(text, copied);
    text = std::move(out);
  }
  return text;
}

std::vector<std::string> snapshot() {
  std::lock_guard lock(gMutex);
  return secrets();
}
}  // namespace

std::string SecretRegistry::redact(std::string text) {
  std::lock_guard lock(gMutex);
  return redactWith(secrets(), std::move(text));
}

namespace {
// Every string and object key of `copy` redacted in place. Iterative: the value may be as deep as kMaxJsonDepth,
// and the walk must not care.
void redactTree(const std::vector<std::string>& list, nlohmann::json& copy) {
  std::vector<nlohmann::json*> todo{&copy};
  while (!todo.empty()) {
    nlohmann::json* v = todo.back();
    todo.pop_back();
    if (v->is_string()) {
      *v = redactWith(list, v->get<std::string>());
    } else if (v->is_object()) {
      bool keyHasSecret = false;
      for (auto it = v->begin(); it != v->end() && !keyHasSecret; ++it) keyHasSecret = redactWith(list, it.key()) != it.key();
      if (keyHasSecret) {
        nlohmann::json rebuilt = nlohmann::json::object();
        for (auto it = v->begin(); it != v->end(); ++it) rebuilt[redactWith(list, it.key())] = std::move(it.value());
        *v = std::move(rebuilt);
      }
      for (auto& child : *v) todo.push_back(&child);
    } else if (v->is_array()) {
      for (auto& child : *v) todo.push_back(&child);
    }
  }
}
}  // namespace

nlohmann::json SecretRegistry::redacted(nlohmann::json j) {
  const std::vector<std::string> list = snapshot();
  if (!list.empty()) redactTree(list, j);
  return j;
}

std::string SecretRegistry::dumpRedacted(const nlohmann::json& j, int indent) {
  const std::vector<std::string> list = snapshot();
  if (list.empty()) return dumpJson(j, indent);
  nlohmann::json copy = j;
  redactTree(list, copy);
  return redactWith(list, dumpJson(copy, indent));
}

}  // namespace tg
