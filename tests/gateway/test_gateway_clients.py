#!/usr/bin/env python3
"""Real clients through `tollgate serve` (the gateway in front of its embedded simulator).

  test_gateway_clients.py TOLLGATE_BIN requests        # Debian's python3-requests: tiers, sheds, disconnects, refusals
  test_gateway_clients.py TOLLGATE_BIN openai-sdk      # the official openai npm SDK (tests/gateway/node)
  test_gateway_clients.py TOLLGATE_BIN anthropic-sdk   # the official @anthropic-ai/sdk npm SDK (tests/gateway/node)

requests and openai-sdk use gateway-e2e.json (OpenAI dialect); anthropic-sdk uses gateway-e2e-anthropic.json (the
simulator has one dialect, so the Anthropic route gets its own gateway and simulator). The npm SDKs are installed
by scripts/setup.sh into $BUILD_DIR/node-openai (OPENAI_SDK_DIR).

Starts the gateway on a free loopback port (port 0, read back from its first output line), runs the checks,
stops it. Exits non-zero naming the first check that failed. Needs python3-requests (scripts/setup.sh).
"""
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "e2e-gateway-token-0123456789abcdef"
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}


class Gateway:
    def __init__(self, binary, config="gateway-e2e.json"):
        env = dict(os.environ, TOLLGATE_E2E_TOKEN=TOKEN)
        self.proc = subprocess.Popen([binary, "serve", "--config", os.path.join(HERE, config),
                                      "--history", "off", "--quiet"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.url = self.sim = None
        self.lines = []
        deadline = time.time() + 20
        while time.time() < deadline and not (self.url and self.sim):
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            if m := re.match(r"gateway: (http://\S+)", line):
                self.url = m.group(1)
            if m := re.match(r"embedded simulator: (http://\S+)", line):
                self.sim = m.group(1)
        if not (self.url and self.sim):
            self.stop()
            raise SystemExit("tollgate serve did not start:\n" + "".join(self.lines))
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    def stats(self):
        return requests.get(self.sim + "/__sim/stats", timeout=5).json()

    def sim_requests(self, group):
        return self.stats()["groups"].get(group, {}).get("requests", 0)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise SystemExit("tollgate serve did not stop within 15 s of SIGTERM")
        return self.proc.returncode


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what + (f"  ({detail})" if detail else ""), flush=True)
    if not cond:
        raise AssertionError(what + (f": {detail}" if detail else ""))


def headers(**extra):
    h = {"Authorization": "Bearer " + TOKEN}
    h.update({k.replace("_", "-"): v for k, v in extra.items()})
    return h


def run_requests(gw):
    chat = gw.url + "/openai/v1/chat/completions"
    s = requests.Session()
    r = s.post(chat, json=CHAT, headers=headers(), timeout=30)
    check(r.status_code == 200 and "usage" in r.json(), "a completion through the gateway", r.text[:200])
    check("content-length" in r.headers, "answered with Content-Length")

    # The tier header reaches the engine: the simulator counts the tier the engine sent the request as.
    before = gw.stats()["groups"]["chat"]["tiers"]["P0"]["requests"]
    r = s.post(chat, json=CHAT, headers=headers(X_Tollgate_Tier="P0"), timeout=30)
    after = gw.stats()["groups"]["chat"]["tiers"]["P0"]["requests"]
    check(r.status_code == 200 and after == before + 1, "X-Tollgate-Tier: P0 is sent as P0", f"{before} -> {after}")

    # Refusals, none of which reach the upstream.
    sent = gw.sim_requests("chat")
    r = requests.post(chat, json=CHAT, timeout=10)
    check(r.status_code == 401, "no token: 401", str(r.status_code))
    r = requests.post(chat, json=CHAT, headers={"Authorization": "Bearer " + TOKEN[:-1] + "X"}, timeout=10)
    check(r.status_code == 401, "wrong token: 401", str(r.status_code))
    r = requests.get(gw.url + "/nowhere/v1/models", headers=headers(), timeout=10)
    check(r.status_code == 404 and "/openai" in r.text, "unknown route: 404 naming the routes", r.text[:200])
    r = requests.post(chat, data="x" * 70000, headers=headers(), timeout=10)
    check(r.status_code == 413 and "65536" in r.text, "over max_body_bytes: 413", r.text[:200])
    r = requests.post(chat, json=CHAT, headers=headers(X_Tollgate_Tier="P5"), timeout=10)
    check(r.status_code == 400 and "X-Tollgate-Tier" in r.text, "bad tier: 400 naming the header", r.text[:200])
    with socket.create_connection(urlhostport(gw.url)) as sock:
        sock.sendall(b"POST /openai/v1/chat/completions HTTP/1.1\r\nHost: x\r\nBroken header line\r\n\r\n")
        sock.settimeout(5)
        raw = sock.recv(200)
    check(raw.startswith(b"HTTP/1.1 400"), "malformed HTTP: 400", raw[:40])
    check(gw.sim_requests("chat") == sent, "refused requests never reach the upstream")

    # Deadline shed on a spent window: held until its deadline, then 429 with the window's reset.
    for _ in range(3):
        r = s.post(chat, json=CHAT, headers=headers(X_RateLimit_Group="tight"), timeout=30)
        check(r.status_code == 200, "spending the tight group's window", str(r.status_code))
    t0 = time.time()
    r = s.post(chat, json=CHAT, headers=headers(X_RateLimit_Group="tight", X_Tollgate_Deadline="0.5"), timeout=30)
    held = time.time() - t0
    ms = float(r.headers.get("retry-after-ms", "nan"))
    check(r.status_code == 429, "deadline shed: 429", f"{r.status_code} {r.text[:200]}")
    check(0.4 <= held < 2.5, "held until the deadline, not bounced", f"{held:.2f} s")
    check(1000 < ms <= 4400, "retry-after-ms is the window's reset (4 s window)", f"{ms} ms")
    check(int(r.headers["retry-after"]) == -(-ms // 1000), "Retry-After is retry-after-ms rounded up",
          f"{r.headers['retry-after']} vs {ms}")

    # A client that hangs up while queued is never sent, even once the window resets.
    sent = gw.sim_requests("tight")
    body = json.dumps(CHAT).encode()
    sock = socket.create_connection(urlhostport(gw.url))
    sock.sendall(b"POST /openai/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode() +
                 b"\r\nX-RateLimit-Group: tight\r\nX-Tollgate-Deadline: 20\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    time.sleep(0.5)
    sock.close()
    time.sleep(5)  # past the 4 s window's reset
    check(gw.sim_requests("tight") == sent, "a client gone while queued never reaches the upstream",
          f"{sent} -> {gw.sim_requests('tight')}")


def urlhostport(url):
    host, port = url.split("//", 1)[1].split(":")
    return host, int(port)


def run_sdk(gw):
    sdk_dir = os.environ.get("OPENAI_SDK_DIR")
    check(sdk_dir and os.path.isdir(os.path.join(sdk_dir, "node_modules", "openai")),
          "the openai SDK is installed (scripts/setup.sh runs npm ci into the build folder)", str(sdk_dir))
    script = os.path.join(HERE, "node", "openai_sdk_test.mjs")
    env = dict(os.environ, GATEWAY_URL=gw.url + "/openai/v1", GATEWAY_TOKEN=TOKEN, MAX_TOKENS="8",
               FLOOD_N="24", FLOOD_P0_DELAY_MS="150")
    for mode in ("all", "flood"):
        p = subprocess.run(["node", script, mode], env=env, capture_output=True, text=True, timeout=120)
        lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
        for l in lines:
            print("     " + json.dumps(l)[:400], flush=True)
        check(p.returncode == 0, f"openai SDK, mode {mode}: every check passed", p.stderr[-500:])
        if mode == "flood":
            p0 = next(l for l in lines if l["check"] == "flood.p0_stream")
            pending = (p0.get("atFirstChunk") or {}).get("p2Pending", 0)
            check(pending > 0, "the P0 stream flowed while P2s were still queued", f"{pending} P2 pending")
            p2 = next(l for l in lines if l["check"] == "flood.p2")
            check(p2["threw"] == 0 and not p2["troubled"], "no P2 call saw a 429 while its deadline allowed waiting")
    # The gateway asked for usage on the client's behalf where it did not: the client never sees that chunk.
    stats = gw.stats()
    check(stats["totals"]["streams_completed"] >= 2, "the simulator streamed", str(stats["totals"]))


def run_anthropic_sdk(gw):
    sdk_dir = os.environ.get("ANTHROPIC_SDK_DIR") or os.environ.get("OPENAI_SDK_DIR")
    check(sdk_dir and os.path.isdir(os.path.join(sdk_dir, "node_modules", "@anthropic-ai", "sdk")),
          "the @anthropic-ai/sdk SDK is installed (scripts/setup.sh runs npm ci into the build folder)", str(sdk_dir))
    script = os.path.join(HERE, "node", "anthropic_sdk_test.mjs")
    # No ANTHROPIC_* from the caller's environment: the SDK reads ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL, ...
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_SDK_DIR=sdk_dir, GATEWAY_URL=gw.url + "/anthropic", GATEWAY_ROOT=gw.url, SIM_URL=gw.sim,
               GATEWAY_TOKEN=TOKEN, MAX_TOKENS="16")
    p = subprocess.run(["node", script], env=env, capture_output=True, text=True, timeout=120)
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    for l in lines:
        print("     " + json.dumps(l)[:600], flush=True)
    names = {l["check"] for l in lines}
    want = {"setup", "create", "stream", "stream.raw", "shed", "shed.retry_honoured", "noretry", "errors.wrong_key",
            "errors.no_key", "errors.bad_tier", "errors.not_forwarded", "abort", "abort.next_served"}
    check(want <= names, "the Anthropic SDK ran every check", ", ".join(sorted(want - names)))
    check(p.returncode == 0, "Anthropic SDK: every check passed",
          "; ".join(l["check"] for l in lines if not l["ok"]) + " " + p.stderr[-500:])


def main():
    binary, what = sys.argv[1], sys.argv[2]
    if what not in ("requests", "openai-sdk", "anthropic-sdk"):
        raise SystemExit(f"unknown client {what}: expected requests, openai-sdk or anthropic-sdk")
    gw = Gateway(binary, "gateway-e2e-anthropic.json" if what == "anthropic-sdk" else "gateway-e2e.json")
    try:
        {"requests": run_requests, "openai-sdk": run_sdk, "anthropic-sdk": run_anthropic_sdk}[what](gw)
    except AssertionError:
        gw.stop()
        print("".join(gw.lines[-30:]))
        return 1
    rc = gw.stop()
    check(rc == 0, "tollgate serve stops cleanly on SIGTERM", f"exit {rc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
