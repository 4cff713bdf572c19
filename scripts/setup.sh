#!/usr/bin/env bash
# Installs the Debian 12 packages Tollgate builds with (only those missing), then configures and builds.
# Used by scripts/demo, scripts/test and scripts/bench; safe to run again (incremental).
set -euo pipefail
cd "$(dirname "$0")/.."

# Everything the README's two commands need on a brand-new Debian 12 root (--no-install-recommends):
# libqt6opengl6-dev because Debian's qt6-charts-dev needs Qt6OpenGL's CMake files without depending on them.
PACKAGES=(cmake ninja-build g++ pkg-config
          qt6-base-dev qt6-charts-dev libqt6opengl6-dev libgl-dev
          libcurl4-openssl-dev nlohmann-json3-dev libsqlite3-dev sqlite3
          libbenchmark-dev xvfb xauth
          libmicrohttpd-dev prometheus-cpp-dev python3-requests
          nginx-light   # a real proxy/limiter to measure the gateway against (gateway_bench; issue 14 uses it too)
          qt6-tools-dev qt6-l10n-tools qt6-translations-l10n  # Qt6LinguistTools, lupdate/lrelease; Qt's zh_CN
          desktop-file-utils appstream  # test_packaging_files validates the desktop entry and the metainfo
          systemd       # and the gateway's unit (systemd-analyze verify); nothing is started by it
          libhiredis-dev redis-server   # shared quota (core/shared); tests start their own redis-server
          dbus-daemon   # test_desktop_notifier starts a private bus for a notification service
          openssl)      # test_cli_network: a TLS upstream (openssl s_server) with a certificate of its own
# TOLLGATE_EXTRA_PACKAGES: more packages for one caller (scripts/package adds dpkg-dev and lintian).
read -r -a extra <<<"${TOLLGATE_EXTRA_PACKAGES:-}"
PACKAGES+=("${extra[@]}")
# TOLLGATE_SETUP_PACKAGES_ONLY=1: install the packages and stop (no node, no configure, no build).
PACKAGES_ONLY=${TOLLGATE_SETUP_PACKAGES_ONLY:-0}
# Node for the openai and Anthropic SDK tests (tests/gateway/node): Debian's only when there is no `node` at all,
# since a nodesource nodejs (which bundles npm) conflicts with Debian's npm package.
[ "$PACKAGES_ONLY" = 1 ] || command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs npm)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ "$PACKAGES_ONLY" = 1 ] && exit 0

# The Debian package that ships a CMake package's config file, for the message below.
debian_package_for() {
  case "$1" in
    Qt6OpenGL) echo libqt6opengl6-dev ;;
    Qt6Charts) echo qt6-charts-dev ;;
    Qt6LinguistTools) echo qt6-tools-dev ;;
    Qt6*) echo qt6-base-dev ;;
    CURL) echo libcurl4-openssl-dev ;;
    nlohmann_json) echo nlohmann-json3-dev ;;
    SQLite3) echo libsqlite3-dev ;;
    benchmark) echo libbenchmark-dev ;;
    MHD|libmicrohttpd) echo libmicrohttpd-dev ;;
    prometheus-cpp) echo prometheus-cpp-dev ;;
    hiredis) echo libhiredis-dev ;;
    *) echo "" ;;
  esac
}

BUILD_DIR="${TOLLGATE_BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  log=$(mktemp)
  if ! cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"$log" 2>&1; then
    # Name the missing piece instead of leaving a newcomer with a CMake trace (the trace stays in the log).
    # ("-- Could NOT find X" lines are optional packages; a required one is indented under "CMake Error")
    names=$( { grep -oE '(dependency|Could not find a package configuration file provided by) "?[A-Za-z0-9_]+' "$log";
               grep -oE '^ +Could NOT find [A-Za-z0-9_]+' "$log"; } | awk '{print $NF}' | tr -d '"' | sort -u || true)
    # pkg-config: "The following required packages were not found:" then " - libmicrohttpd>=0.9.75"
    names+=$'\n'$(grep -A5 'required packages were not found' "$log" | grep -oE '^ *- *[A-Za-z0-9_+-]+' \
              | sed 's/^ *- *//' || true)
    names+=$'\n'$(grep -oE 'Failed to find required Qt component "[A-Za-z0-9]+"' "$log" | grep -oE '"[A-Za-z0-9]+"' \
              | tr -d '"' | sed 's/^/Qt6/' | sort -u || true)
    cp "$log" "$BUILD_DIR/configure.log" 2>/dev/null || true
    echo "setup: configuring the build failed (full CMake output: $BUILD_DIR/configure.log)." >&2
    found=0
    for n in $names; do
      pkg=$(debian_package_for "$n")
      if [ -n "$pkg" ]; then
        echo "setup: CMake could not find $n: install the Debian package '$pkg' (apt-get install $pkg) and add it to PACKAGES in scripts/setup.sh." >&2
      else
        echo "setup: CMake could not find $n: install the Debian -dev package that ships it (apt-file search ${n}Config.cmake)." >&2
      fi
      found=1
    done
    [ "$found" -eq 1 ] || grep -E 'CMake Error|error' "$log" | head -5 >&2
    rm -f "$log" "$BUILD_DIR/build.ninja"
    exit 1
  fi
  rm -f "$log"
fi
# TOLLGATE_SETUP_NO_BUILD=1: packages and configure only (scripts/check builds the targets it was asked for).
[ "${TOLLGATE_SETUP_NO_BUILD:-0}" = 1 ] || cmake --build "$BUILD_DIR" -j "$(nproc)"

# The official openai and Anthropic SDKs for tests/gateway/node, pinned by one lock file (openai 4.104.0 and
# @anthropic-ai/sdk 0.41.0: the last releases for Node 18). The folder keeps its name, node-openai (OPENAI_SDK_DIR).
# Installed into the build dir once per lock file: the stamp inside node_modules (which `npm ci` recreates)
# holds the hash, so reruns need no network. A failed install is reported, not fatal: only those tests need it,
# and they fail naming the missing folder.
NODE_SRC=tests/gateway/node
NODE_DIR="$BUILD_DIR/node-openai"
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  lock_hash=$(cat "$NODE_SRC/package.json" "$NODE_SRC/package-lock.json" | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$NODE_DIR/node_modules/.tollgate-lock-sha256" 2>/dev/null)" != "$lock_hash" ]; then
    echo "== installing the openai and Anthropic SDKs for the gateway tests into $NODE_DIR"
    mkdir -p "$NODE_DIR"
    cp "$NODE_SRC/package.json" "$NODE_SRC/package-lock.json" "$NODE_DIR/"
    # Node reads only its own bundled CA list, not the system's: behind a TLS-inspecting proxy whose CA the
    # system trusts (apt, curl and git work), npm fails with SELF_SIGNED_CERT_IN_CHAIN. Add the system store,
    # as the other tools use it (only when the caller has not chosen one).
    ca_env=()
    if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r /etc/ssl/certs/ca-certificates.crt ]; then
      ca_env=(NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
    fi
    npm_log="$(cd "$NODE_DIR" && pwd)/npm-ci.log"
    if (cd "$NODE_DIR" && env "${ca_env[@]}" npm ci --no-audit --no-fund --loglevel=error 2>&1 | tee "$npm_log"); then
      echo "$lock_hash" >"$NODE_DIR/node_modules/.tollgate-lock-sha256"
    elif grep -qiE 'CERT|certificate' "$npm_log"; then
      # A TLS-inspecting proxy whose CA this machine does not trust yet (a fresh root built from Debian's store).
      echo "setup: npm ci in $NODE_DIR failed: npm could not verify registry.npmjs.org's certificate. Behind a" \
           "TLS-inspecting proxy, add its CA to the system store (/usr/local/share/ca-certificates, then" \
           "update-ca-certificates) or set NODE_EXTRA_CA_CERTS, and rerun scripts/setup.sh: the openai/Anthropic" \
           "SDK tests fail until then." >&2
    else
      echo "setup: npm ci in $NODE_DIR failed (is registry.npmjs.org reachable?): the openai/Anthropic SDK tests" \
           "will fail until it succeeds." >&2
    fi
  fi
else
  echo "setup: no node/npm: the openai/Anthropic SDK tests (tests/gateway/node) cannot run; install nodejs and npm." >&2
fi
