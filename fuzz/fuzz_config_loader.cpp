// Fuzz target: a Tollgate config file, through the loader's real path: the bytes become a file (an
// in-memory one, memfd) that ConfigLoader::fromFile reads and validates; when it has a "simulator"
// section, SimConfig::fromJson validates that too. Invalid input must end in a ConfigError (file, JSON
// path, expectation); any other exception is a finding.
#include "config_loader.h"
#include "sim_config.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

// One in-memory file for the whole run, rewritten per input.
const std::string& memFilePath(int& fd) {
  static int memFd = -1;
  static std::string path;
  if (memFd < 0) {
    memFd = memfd_create("tollgate-fuzz-config", MFD_CLOEXEC);
    if (memFd < 0) std::abort();
    path = "/proc/self/fd/" + std::to_string(memFd);
  }
  fd = memFd;
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  int fd = -1;
  const std::string& path = memFilePath(fd);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  try {
    const tg::TollgateConfig config = tg::ConfigLoader::fromFile(path);
    if (config.simulator) tg::SimConfig::fromJson(*config.simulator, path);
  } catch (const tg::ConfigError&) {
  }
  return 0;
}
