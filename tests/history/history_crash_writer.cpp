// Helper for the kill -9 test: writes samples as fast as it can into argv[1], one per millisecond of
// fake time starting at ts 1, and after every explicit flush prints "flushed N" (all ts <= N are committed).
// The test kills it with SIGKILL at an arbitrary moment.
#include "history_store.h"

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: history_crash_writer DB\n");
    return 2;
  }
  tg::HistoryOptions opts;
  opts.flushIntervalMs = 20;
  std::string error;
  auto store = tg::HistoryStore::open(argv[1], opts, &error);
  if (!store) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  std::int64_t ts = 0;
  for (int round = 0;; ++round) {
    std::vector<tg::Sample> batch;
    for (int i = 0; i < 500; ++i) {
      tg::Sample s;
      s.tsMs = ++ts;
      s.group = "g";
      s.sends = static_cast<int>(ts % 1000);
      batch.push_back(std::move(s));
    }
    store->append(std::move(batch));
    if (round % 10 == 9) {
      if (!store->flush()) return 1;
      std::printf("flushed %lld\n", static_cast<long long>(ts));
      std::fflush(stdout);
    }
  }
}
