// The libcurl options every transfer that carries a key shares (the engine's and `tollgate probe`'s), for the
// networks operators run in: a resolver that hangs, a CA of their own, an outbound proxy.
#pragma once

#include <curl/curl.h>

#include <string>

namespace tg {

// Sets them on `easy`; the name of the option libcurl refused, or nullptr.
// - CURLOPT_QUICK_EXIT: a transfer given up during a name lookup (timed out, cancelled, its client gone)
//   leaves the resolver thread behind instead of joining it. libcurl's threaded resolver otherwise waited for
//   the lookup on the engine's one transfer thread: a DNS server that answers in 10 s froze every group for
//   as long.
// - CAs of the operator's own: CURL_CA_BUNDLE or else SSL_CERT_FILE (a PEM bundle, in place of the system's
//   bundle file), SSL_CERT_DIR (hashed directories, in place of /etc/ssl/certs). Debian's libcurl keeps the
//   other of the two, so a bundle given adds to the system's directory. Verification is never turned off.
// - Loopback never goes through a proxy (the embedded simulator, a model server on this host): libcurl takes
//   http_proxy / https_proxy / no_proxy from the environment; "localhost,127.0.0.0/8,::1" is added to no_proxy.
const char* setNetworkOptions(CURL* easy);

// What the environment changes of the above ("" when nothing): the CA file or directory trusted and the proxies
// in effect (host and port only: a proxy URL may carry a password).
std::string networkEnvironmentSummary();

// Why a CA variable cannot be used (names the variable and the path), or "".
std::string caEnvironmentProblem();

// Logs both, once a process (an error for a CA that cannot be used: every https transfer would fail).
void logNetworkEnvironmentOnce();

}  // namespace tg
