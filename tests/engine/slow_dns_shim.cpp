// LD_PRELOAD shim for test_cli_network: a name under ".slow.test" resolves after TOLLGATE_TEST_DNS_DELAY_S
// seconds (a DNS server that answers late) and then does not exist; every other name resolves as ever. The
// process under test is the real tollgate binary with its real libcurl and resolver threads.
#include <dlfcn.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

using GetaddrinfoFn = int (*)(const char*, const char*, const addrinfo*, addrinfo**);

extern "C" int getaddrinfo(const char* node, const char* service, const addrinfo* hints, addrinfo** res) {
  static const char kSuffix[] = ".slow.test";
  const size_t n = node ? strlen(node) : 0;
  if (n >= sizeof kSuffix - 1 && strcmp(node + n - (sizeof kSuffix - 1), kSuffix) == 0) {
    const char* delay = getenv("TOLLGATE_TEST_DNS_DELAY_S");
    sleep(delay ? static_cast<unsigned>(atoi(delay)) : 5u);
    return EAI_NONAME;
  }
  const auto real = reinterpret_cast<GetaddrinfoFn>(dlsym(RTLD_NEXT, "getaddrinfo"));
  return real ? real(node, service, hints, res) : EAI_SYSTEM;
}
