// Shared quota through a real redis-server (started here on a free loopback port, stopped after): the Lua
// scripts on their own, the ledger with hand-set time, then a fleet of `tollgate run` processes on one
// simulator key. (The numbers issue 15 names are measured by bench/shared_quota_bench; these assert the
// behaviour with margins for a busy 2-core machine.)
#include "cli_process.h"
#include "config_error.h"
#include "config_loader.h"
#include "freezable_proxy.h"
#include "engine.h"
#include "log.h"
#include "redis_connection.h"
#include "redis_process.h"
#include "secret.h"
#include "shared_ledger.h"
#include "shared_quota_client.h"
#include "shared_quota_scripts.h"
#include "sim_config.h"
#include "sim_server.h"

#include <QDirIterator>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

using nlohmann::json;
using namespace tgtest;
namespace sc = tg::shared_scripts;

namespace {

tg::RedisEndpoint endpoint(int port) {
  tg::RedisEndpoint e;
  e.port = port;
  e.timeoutS = 0.5;
  return e;
}

// A lease call as the worker makes it; returns {granted requests, wait ms, blocked ms}.
struct Lease {
  double granted = 0, waitMs = 0, blockedMs = 0, live = 0, readyMs = 0;
};
Lease lease(tg::RedisConnection& c, const std::string& inst, int tier, double want, double rate, double burst,
            double used = 0, double deadMs = 1500) {
  tg::RedisReply r;
  const bool ok = c.eval(sc::kLease, {"t:q:g:fp", "t:l:g:fp", "t:instances"},
                         {inst, std::to_string(tier), std::to_string(want), "0", std::to_string(rate), "0",
                          std::to_string(burst), "0.25", std::to_string(used), "600000", std::to_string(deadMs), "0",
                          "0.2"},
                         r);
  if (!ok || r.isError() || r.elements.size() < 7) {
    qWarning("lease failed: %s %s", c.lastError().c_str(), r.str.c_str());
    return {-1, -1, -1, -1, -1};
  }
  return {r.elements[0].number(), r.elements[2].number(), r.elements[5].number(), r.elements[4].number(),
          r.elements[6].number()};
}

// Callbacks that do nothing, run on the calling thread: a test sets the ones it watches.
tg::SharedQuotaCallbacks quietCallbacks() {
  tg::SharedQuotaCallbacks cb;
  cb.post = [](std::function<void()> f) { f(); };
  cb.grant = [](const tg::LeaseGrant&) {};
  cb.mode = [](tg::SharedMode, int, const std::string&) {};
  cb.hold = [](const std::string&, const std::string&, double, const std::string&, const std::string&) {};
  cb.action = [](const nlohmann::json&) {};
  cb.fleet = [](std::vector<tg::FleetMember>) {};
  cb.stats = [] { return nlohmann::json::object(); };
  return cb;
}

// A client of Redis on `port` under namespace `ns` as instance `instance`.
tg::SharedQuotaConfig clientConfig(int port, const std::string& ns, const std::string& instance,
                                   double timeoutS = 0.05) {
  tg::SharedQuotaConfig cfg;
  cfg.enabled = true;
  cfg.port = port;
  cfg.ns = ns;
  cfg.instance = instance;
  cfg.timeoutS = timeoutS;
  return cfg;
}

// A P1 lease ask on scope (g, fp).
tg::LeaseAsk p1Ask(double requests, double rateHint, double burst) {
  tg::LeaseAsk ask;
  ask.group = "g";
  ask.fingerprint = "fp";
  ask.tier = tg::Tier::P1;
  ask.requests = requests;
  ask.rateHint = rateHint;
  ask.burst = burst;
  return ask;
}

// What Tollgate logged while `fn` ran.
std::string logOf(const std::function<void()>& fn) {
  std::FILE* log = std::tmpfile();
  if (!log) qFatal("tmpfile failed");
  tg::Log::setSink(log);
  fn();
  tg::Log::setSink(stderr);
  std::rewind(log);
  std::string text;
  for (int ch; (ch = std::fgetc(log)) != EOF;) text += static_cast<char>(ch);
  std::fclose(log);
  return text;
}

void sleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Engine instances as separate processes: `tollgate run --headless` on one config each.
struct Fleet {
  std::vector<std::unique_ptr<QProcess>> procs;
  QString dir;
  // n more instances (numbered on from those already started). env: extra variables; history: each
  // instance keeps a history file (events, metrics) and prints its progress instead of running quiet.
  void start(int n, const json& cfg, const QString& d, double seconds, const QProcessEnvironment& extraEnv = {},
             bool history = false) {
    dir = d;
    const int first = static_cast<int>(procs.size());
    for (int i = first; i < first + n; ++i) {
      json c = cfg;
      if (c.contains("shared_quota") && !c["shared_quota"].contains("instance"))
        c["shared_quota"]["instance"] = "inst-" + std::to_string(i);
      const QString cfgPath = dir + QString("/cfg%1.json").arg(i);
      writeFile(cfgPath, c.dump());
      auto p = std::make_unique<QProcess>();
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert("TG_SHARED_KEY", "sk-fleet-secret-0123456789");
      env.insert(extraEnv);
      p->setProcessEnvironment(env);
      p->setStandardOutputFile(dir + QString("/out%1.txt").arg(i));
      p->setStandardErrorFile(dir + QString("/err%1.txt").arg(i));
      QStringList args{"run", "--headless", "--config", cfgPath, "--duration", QString::number(seconds), "--report",
                       dir + QString("/report%1.json").arg(i)};
      args += history ? QStringList{"--history", dir + QString("/history%1.db").arg(i)}
                      : QStringList{"--quiet", "--history", "off"};
      p->start(bin(), args);
      p->waitForStarted(5000);
      procs.push_back(std::move(p));
    }
  }
  bool wait() {
    bool ok = true;
    for (auto& p : procs) ok = p->waitForFinished(120000) && p->exitStatus() == QProcess::NormalExit && ok;
    return ok;
  }
  QString err(int i) const {
    QFile f(dir + QString("/err%1.txt").arg(i));
    f.open(QIODevice::ReadOnly);
    return QString::fromUtf8(f.readAll());
  }
  ~Fleet() {
    for (auto& p : procs)
      if (p->state() != QProcess::NotRunning) {
        p->kill();
        p->waitForFinished(2000);
      }
  }
};

// The simulator's own counters for the fleet's group: the judge of what reached the upstream.
json chatCounters(const tg::SimServer& sim) { return sim.stats()["groups"]["chat"]; }

// A simulator whose one group "chat" limits at `limit` per `windowS` with `algorithm`, answering in `dialect`.
tg::SimConfig chatSim(const std::string& dialect, const std::string& algorithm, double limit, double windowS) {
  return tg::SimConfig::fromJson(
      json{{"dialect", dialect},
           {"groups", {{"chat", {{"algorithm", algorithm}, {"limit", limit}, {"window_s", windowS}}}}}},
      "sim");
}

// Epoch ms of the first line of `log` after `fromMs` that contains `needle` (log lines start with an ISO
// UTC time), or -1.
qint64 firstLineAfter(const QString& log, const QString& needle, qint64 fromMs) {
  for (const QString& line : log.split('\n')) {
    if (!line.contains(needle)) continue;
    const QDateTime t = QDateTime::fromString(line.section(' ', 0, 0), Qt::ISODateWithMs);
    if (t.isValid() && t.toMSecsSinceEpoch() >= fromMs) return t.toMSecsSinceEpoch();
  }
  return -1;
}

// An engine of one group "chat" with one key, sharing its quota through the redis-server on redisPort.
tg::EngineConfig sharedEngine(const std::string& instance, int redisPort, const std::string& ns, const std::string& url) {
  tg::EngineConfig e;
  e.name = instance;
  tg::GroupConfig g;
  g.name = "chat";
  g.baseUrl = url;
  g.concurrency = 32;
  tg::KeyConfig k;
  k.name = "k";
  k.secret = "sk-fleet-secret-0123456789";
  g.keys.push_back(k);
  e.groups.push_back(g);
  e.sharedQuota.enabled = true;
  e.sharedQuota.port = redisPort;
  e.sharedQuota.ns = ns;
  e.sharedQuota.instance = instance;
  return e;
}

// A ledger with one scope whose asks are recorded, at hand-set time t0.
struct LedgerUnderTest {
  tg::SharedLedger ledger{enabledConfig(), [this](const tg::LeaseAsk& a) { asks.push_back(a); }};
  std::vector<tg::LeaseAsk> asks;
  int s = ledger.addScope("chat", "fp");
  tg::TimePoint t0{};
  tg::Duration wait{};
  tg::WaitReason why;
  static tg::SharedQuotaConfig enabledConfig() {
    tg::SharedQuotaConfig cfg;
    cfg.enabled = true;
    return cfg;
  }
};

qint64 nowMs() { return QDateTime::currentMSecsSinceEpoch(); }

json fleetConfig(int simPort, int redisPort, double ratePerInstance, bool shared, int heartbeatMs = 250) {
  json c{{"name", "fleet-test"},
         {"groups", json::array({{{"name", "chat"},
                                  {"base_url", "http://127.0.0.1:" + std::to_string(simPort)},
                                  {"concurrency", 16},
                                  {"keys", json::array({{{"name", "shared-key"}, {"env", "TG_SHARED_KEY"}}})}}})},
         {"workload",
          {{"streams", json::array({{{"group", "chat"}, {"tier", "P1"}, {"rate", ratePerInstance}, {"max_tokens", 0},
                                     {"prompt_bytes", 40}}})}}}};
  if (shared)
    c["shared_quota"] = {{"redis", "127.0.0.1:" + std::to_string(redisPort)}, {"namespace", "fleet-test"},
                         {"heartbeat_ms", heartbeatMs}};
  return c;
}

// The one key of a namespace's lease hash (<ns>:l:<group>:<fingerprint>), "" when none exists yet.
std::string leaseHashKey(tg::RedisConnection& c, const std::string& ns) {
  tg::RedisReply r;
  if (!c.call({"KEYS", ns + ":l:*"}, r) || r.elements.size() != 1) return {};
  return r.elements[0].str;
}

// What Redis believes an instance holds of the fleet's capacity (its outstanding lease); -1 when it holds no
// entry (never leased, or returned as dead).
double held(tg::RedisConnection& c, const std::string& leaseKey, const std::string& instance) {
  tg::RedisReply r;
  if (!c.call({"HGET", leaseKey, instance}, r) || r.type == tg::RedisReply::Type::Nil) return -1;
  return r.number(-1);
}

}  // namespace

class TestSharedQuota : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY2(!bin().isEmpty(), "TOLLGATE_BIN is set by CTest");
    QVERIFY2(QFileInfo::exists(kRedisServer), "redis-server is missing: scripts/setup.sh installs it");
    qputenv("TG_SHARED_KEY", "sk-fleet-secret-0123456789");
  }

  // --- config and secrets -------------------------------------------------------------------------

  void configErrorsNameTheField_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("path");
    QTest::newRow("no port") << "redis" << "\"localhost\"" << "/shared_quota/redis";
    QTest::newRow("port out of range") << "redis" << "\"127.0.0.1:70000\"" << "/shared_quota/redis";
    QTest::newRow("IPv6 bracket unclosed") << "redis" << "\"[::1:6379\"" << "/shared_quota/redis";
    QTest::newRow("IPv6 bracket stray") << "redis" << "\"[::1]]:6379\"" << "/shared_quota/redis";
    QTest::newRow("unknown group") << "groups" << "[\"nope\"]" << "/shared_quota/groups/0";
    QTest::newRow("unset password variable") << "password_env" << "\"TG_NO_SUCH_VARIABLE_SET\""
                                             << "/shared_quota/password_env";
    QTest::newRow("timeout too long") << "timeout_ms" << "60000" << "/shared_quota/timeout_ms";
    QTest::newRow("unknown key") << "lease" << "5" << "/shared_quota/lease";
  }
  void configErrorsNameTheField() {
    QFETCH(QString, field);
    QFETCH(QString, value);
    QFETCH(QString, path);
    json j = fleetConfig(1, 2, 1, true);
    j["shared_quota"][field.toStdString()] = json::parse(value.toStdString());
    try {
      tg::ConfigLoader::fromJson(j, "fleet.json");
      QFAIL("expected a ConfigError");
    } catch (const tg::ConfigError& e) {
      QVERIFY2(QString(e.what()).contains("fleet.json") && QString(e.what()).contains(path), e.what());
    }
  }

  // A Redis URL with a password: refused without quoting it (split at its last colon it was the host, and the
  // password went into every "Redis unreachable" line, event and /healthz).
  void aRedisUrlIsRefusedWithoutQuotingIt() {
    for (const char* address : {"redis://default:RedisPassw0rdXYZ@127.0.0.1:6379", "RedisPassw0rdXYZ@127.0.0.1:6379",
                                "127.0.0.1:6379/0", "host name:6379"}) {
      json j = fleetConfig(1, 2, 1, true);
      j["shared_quota"]["redis"] = address;
      try {
        tg::ConfigLoader::fromJson(j, "fleet.json");
        QFAIL(address);
      } catch (const tg::ConfigError& e) {
        QVERIFY2(QString(e.what()).contains("/shared_quota/redis"), e.what());
        QVERIFY2(!QString(e.what()).contains("Passw0rd"), e.what());
      }
    }
  }

  // An IPv6 address as URLs write it: it loaded, then failed at every connect ("Name or service not known").
  void anIpv6AddressInBracketsIsTheAddress() {
    json j = fleetConfig(1, 2, 1, true);
    j["shared_quota"]["redis"] = "[::1]:6380";
    tg::TollgateConfig c = tg::ConfigLoader::fromJson(j, "fleet.json");
    QCOMPARE(QString::fromStdString(c.engine.sharedQuota.host), QString("::1"));
    QCOMPARE(c.engine.sharedQuota.port, 6380);
    j["shared_quota"]["redis"] = "::1:6381";  // bare, as before: the port after the last colon
    c = tg::ConfigLoader::fromJson(j, "fleet.json");
    QCOMPARE(QString::fromStdString(c.engine.sharedQuota.host), QString("::1"));
    QCOMPARE(c.engine.sharedQuota.port, 6381);
    // and messages write it as the config does
    QCOMPARE(tg::redisAddress("::1", 6381), std::string("[::1]:6381"));
    QCOMPARE(tg::redisAddress("127.0.0.1", 6379), std::string("127.0.0.1:6379"));
  }

  void exampleFleetConfigLoads() {
    qputenv("OPENAI_API_KEY", "sk-example-0123456789");
    qputenv("TOLLGATE_REDIS_PASSWORD", "example-redis-password");
    const tg::TollgateConfig c = tg::ConfigLoader::fromFile(TOLLGATE_SOURCE_DIR "/examples/openai-fleet.json");
    QVERIFY(c.engine.sharedQuota.enabled);
    QVERIFY(c.engine.sharedQuota.shares("chat"));
    QCOMPARE(QString::fromStdString(c.engine.sharedQuota.password), QString("example-redis-password"));
    QCOMPARE(c.engine.sharedQuota.timeoutS, 0.05);
  }

  void aWrongPasswordIsNamedNeverShown() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why, 0, {"--requirepass", "the-right-one-42"}), qPrintable(why));
    tg::RedisEndpoint e = endpoint(redis.port);
    e.password = "wrong-secret-7f3a9";
    tg::RedisConnection c(e);
    QVERIFY(!c.ensureConnected());
    QVERIFY2(QString::fromStdString(c.lastError()).contains("authentication refused"), c.lastError().c_str());
    QVERIFY2(!QString::fromStdString(c.lastError()).contains("wrong-secret"), c.lastError().c_str());
    e.password = "the-right-one-42";
    tg::RedisConnection ok(e);
    QVERIFY2(ok.ensureConnected(), ok.lastError().c_str());
    // No password at all: the first command says one is asked for, and where to set it.
    e.password.clear();
    tg::RedisConnection none(e);
    tg::RedisReply r;
    QVERIFY(!none.eval("return 1", {}, {}, r));
    QVERIFY2(QString::fromStdString(none.lastError()).contains("set shared_quota.password_env"), none.lastError().c_str());
    QVERIFY2(QString::fromStdString(none.lastError()).contains(QString("127.0.0.1:%1").arg(redis.port)),
             none.lastError().c_str());
  }

  // An operator action while Redis is away was applied on the instance that issued it and dropped for the
  // others without a word.
  void anActionTheFleetCannotHearIsSaidSo() {
    int port = 0;
    const int fd = listeningLoopbackSocket(&port);  // taken, then closed: nothing listens there
    ::close(fd);
    QVERIFY(port > 0);
    const std::string text = logOf([&] {
      const tg::SharedQuotaCallbacks cb = quietCallbacks();
      tg::SharedQuotaConfig cfg = clientConfig(port, "away", "inst-away");
      tg::SharedQuotaClient client(cfg, cb);
      client.start();
      sleepMs(300);
      client.publishAction({{"action", "pause_tier"}, {"tier", 2}, {"paused", true}});
      sleepMs(600);
      client.stop();
    });
    QVERIFY2(text.find("operator action pause_tier applied on this instance only") != std::string::npos, text.c_str());
  }

  // Two processes under one id (a config copied with its "instance"): counted as one instance and deaf to each
  // other's words, silently. Each heartbeat carries its process's nonce; the other's under our id is said.
  void twoProcessesUnderOneIdAreSaidSo() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    const std::string text = logOf([&] {
      const tg::SharedQuotaCallbacks cb = quietCallbacks();
      tg::SharedQuotaConfig cfg = clientConfig(redis.port, "dup", "gw-copied", 0.5);
      cfg.heartbeatS = 0.2;
      tg::SharedQuotaClient one(cfg, cb), two(cfg, cb);
      one.start();
      sleepMs(100);
      two.start();
      // Busy, as gateways under load are: lease calls stand in for heartbeats (the check rode on those alone).
      const tg::LeaseAsk ask = p1Ask(2, 100, 20);
      for (int i = 0; i < 80; ++i) {  // 4 s: three checks or more each
        one.ask(ask);
        two.ask(ask);
        sleepMs(50);
      }
      one.stop();
      two.stop();
    });
    QVERIFY2(text.find("another process uses this instance's id \"gw-copied\"") != std::string::npos, text.c_str());
  }

  // Something on the port that echoes what it is sent passed AUTH (any answer but an error was taken), then
  // failed with an empty reason.
  void anEchoServerIsNotTakenForRedis() {
    int port = 0;
    const int fd = listeningLoopbackSocket(&port);
    QVERIFY(port > 0);
    std::atomic<bool> stop{false};
    std::thread echo([&] {
      const int c = ::accept(fd, nullptr, nullptr);
      char buf[4096];
      for (ssize_t n; !stop && c >= 0 && (n = ::recv(c, buf, sizeof buf, 0)) > 0;) (void)::send(c, buf, n, MSG_NOSIGNAL);
      if (c >= 0) ::close(c);
    });
    tg::RedisEndpoint e = endpoint(port);
    e.password = "pw-echo-1234";
    tg::RedisConnection c(e);
    const bool connected = c.ensureConnected();
    stop = true;
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    echo.join();
    QVERIFY(!connected);
    QVERIFY2(QString::fromStdString(c.lastError()).contains("not a Redis server"), c.lastError().c_str());
  }

  // A peer that answers AUTH with the password itself (a proxy echoing its argument): the reply is quoted in the
  // error, cut at 40 characters; it is redacted before the cut, or the first 40 of a longer password showed.
  void aPasswordEchoedByThePeerIsNotQuoted() {
    int port = 0;
    const int fd = listeningLoopbackSocket(&port);
    QVERIFY(port > 0);
    const std::string password = "pw-echoed-0123456789-abcdefghij-0123456789-abcdefghij";
    tg::SecretRegistry::add(password);  // as the config's password_env is
    std::thread peer([&] {
      const int c = ::accept(fd, nullptr, nullptr);
      char buf[4096];
      if (c >= 0 && ::recv(c, buf, sizeof buf, 0) > 0) {
        const std::string answer = "+" + password + "\r\n";
        (void)::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      }
      if (c >= 0) ::close(c);
    });
    tg::RedisEndpoint e = endpoint(port);
    e.password = password;
    tg::RedisConnection c(e);
    const bool connected = c.ensureConnected();
    peer.join();
    ::close(fd);
    QVERIFY(!connected);
    QVERIFY2(c.lastError().find("not a Redis server") != std::string::npos, c.lastError().c_str());
    QVERIFY2(c.lastError().find("pw-echoed-0123") == std::string::npos, c.lastError().c_str());
  }

  // A port taken between freePort() and the server's bind: something else answers there and redis-server exits.
  // That is no server of ours, whatever a connection says (start() then tries another port when it chose one).
  void aTakenPortIsNotMistakenForTheServer() {
    int port = 0;
    const int fd = listeningLoopbackSocket(&port);
    RedisProcess taken;
    QString why;
    const bool started = port > 0 && taken.start(&why, port);
    if (fd >= 0) ::close(fd);
    QVERIFY(port > 0);
    QVERIFY2(!started, "a port another socket listens on passed for redis-server's");
    QVERIFY2(why.contains("not listening on " + QString::number(port)) && why.contains("in use"), qPrintable(why));
  }

  // --- the scripts against a real server -------------------------------------------------------------

  void leasesAreReservedInOrderAndP0GoesAhead() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    tg::RedisConnection c(endpoint(redis.port));
    // 100/s, a bucket of 20 with a P0 reserve of 5. A new bucket starts empty (no burst on top of what the
    // upstream counted): a P1 lease of 10 is reserved for when the bucket will hold it above the reserve.
    const Lease first = lease(c, "a", 1, 10, 100, 20);
    QCOMPARE(first.granted, 10.0);
    QVERIFY2(first.readyMs >= 140 && first.readyMs <= 150, qPrintable(QString::number(first.readyMs)));
    // The next asks queue behind it, in order; P0 does not wait for the reserve.
    const Lease p2 = lease(c, "b", 2, 10, 100, 20);
    const Lease p0 = lease(c, "c", 0, 10, 100, 20);
    const Lease p2b = lease(c, "b", 2, 10, 100, 20);
    qInfo("ready: P1 %.0f ms, P2 %.0f ms, P0 %.0f ms, P2 %.0f ms", first.readyMs, p2.readyMs, p0.readyMs, p2b.readyMs);
    QVERIFY2(p2.readyMs >= first.readyMs + 95, qPrintable(QString::number(p2.readyMs)));
    QVERIFY2(p2b.readyMs >= p0.readyMs + 140, qPrintable(QString::number(p2b.readyMs - p0.readyMs)));
    // P1/P2 reserve at most a second ahead: beyond, nothing, and when to ask again.
    const Lease far = lease(c, "b", 2, 60, 100, 20);
    QCOMPARE(far.granted, 0.0);
    QVERIFY2(far.waitMs > 0, qPrintable(QString::number(far.waitMs)));
    sleepMs(900);  // the debt is paid and the bucket full again: a lease at once
    const Lease now = lease(c, "a", 1, 10, 100, 20);
    QCOMPARE(now.granted, 10.0);
    QCOMPARE(now.readyMs, 0.0);
  }

  void scriptsSurviveAServerThatLostThem() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    tg::RedisConnection c(endpoint(redis.port));
    QVERIFY(lease(c, "a", 0, 1, 10, 2).granted >= 0);
    tg::RedisReply r;
    QVERIFY(c.call({"SCRIPT", "FLUSH"}, r));
    QVERIFY(!r.isError());
    const Lease again = lease(c, "a", 0, 1, 10, 2);  // NOSCRIPT: loaded again, answered
    QVERIFY2(again.granted >= 0, c.lastError().c_str());
  }

  // A Redis that answers but refuses (a read-only replica here; OOM or a proxy's errors alike) cannot share the
  // fleet's quota: the instance falls back to its share, saying why, as when Redis is down. It used to stay
  // "shared", get no lease and shed every request as "the fleet's capacity is spent", logging each reply.
  void aRedisThatRefusesFallsBackSayingWhy() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    tg::RedisConnection admin(endpoint(redis.port));
    tg::RedisReply r;
    QVERIFY(admin.call({"REPLICAOF", "127.0.0.1", "1"}, r));  // a master that is not there: writes refused
    QVERIFY2(!r.isError(), r.str.c_str());
    std::mutex m;
    std::vector<std::pair<tg::SharedMode, std::string>> modes;
    int grants = 0;
    tg::SharedQuotaCallbacks cb = quietCallbacks();
    cb.grant = [&](const tg::LeaseGrant&) {
      std::lock_guard lk(m);
      ++grants;
    };
    cb.mode = [&](tg::SharedMode mode, int, const std::string& reason) {
      std::lock_guard lk(m);
      modes.emplace_back(mode, reason);
    };
    tg::SharedQuotaConfig cfg = clientConfig(redis.port, "ro", "inst-ro", 0.5);
    tg::SharedQuotaClient client(cfg, cb);
    client.start();
    const tg::LeaseAsk ask = p1Ask(5, 10, 10);
    client.ask(ask);
    bool fellBack = false;
    for (int i = 0; i < 60 && !fellBack; ++i) {
      sleepMs(50);
      std::lock_guard lk(m);
      for (const auto& [mode, reason] : modes)
        if (mode == tg::SharedMode::Fallback) {
          fellBack = true;
          QVERIFY2(reason.find("READONLY") != std::string::npos, reason.c_str());
        }
    }
    client.stop();
    std::lock_guard lk(m);
    QVERIFY(fellBack);
    QCOMPARE(grants, 0);
    for (const auto& [mode, reason] : modes) QVERIFY(mode != tg::SharedMode::Shared);
  }

  // A partition that leaves the subscription's connection open but dead: the subscriber only read, so it heard
  // a quiet fleet for good (Redis counted it subscribed, the fleet's holds and actions reached no one). It PINGs
  // every heartbeat and subscribes again when nothing, not even the answer, came for three.
  void aSubscriptionDeadWithoutAWordIsMadeAgain() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    FreezableProxy proxy(redis.port);
    QVERIFY(proxy.port() > 0);
    std::mutex m;
    std::vector<std::string> heard;
    tg::SharedQuotaCallbacks cb = quietCallbacks();
    cb.hold = [&](const std::string&, const std::string&, double, const std::string&, const std::string& reason) {
      std::lock_guard lk(m);
      heard.push_back(reason);
    };
    tg::SharedQuotaConfig cfg = clientConfig(proxy.port(), "deaf", "inst-deaf", 0.2);
    cfg.heartbeatS = 0.3;
    tg::SharedQuotaClient client(cfg, cb);
    client.start();
    tg::RedisConnection pub(endpoint(redis.port));
    // Published until heard: true once `reason` reached the client within `seconds`.
    auto heardWithin = [&](const std::string& reason, double seconds) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
      while (std::chrono::steady_clock::now() < until) {
        tg::RedisReply r;
        if (!pub.call({"PUBLISH", "deaf:word", "g\tfp\t1000\tother\t" + reason}, r)) return false;
        sleepMs(100);
        std::lock_guard lk(m);
        if (std::find(heard.begin(), heard.end(), reason) != heard.end()) return true;
      }
      return false;
    };
    QVERIFY(heardWithin("before", 5));
    proxy.freeze();
    // Three heartbeats of silence (0.9 s), then subscribed again through the proxy, which forwards new connections.
    QVERIFY2(heardWithin("after", 6), "the subscription stayed deaf after the partition");
    client.stop();
  }

  void wordHoldsTheScopeAndTellsTheFleet() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    tg::RedisConnection c(endpoint(redis.port)), sub(endpoint(redis.port));
    tg::RedisReply r;
    QVERIFY(sub.call({"SUBSCRIBE", "t:word"}, r));
    tg::RedisReply w;
    QVERIFY(c.eval(sc::kWord, {"t:q:g:fp", "t:word"}, {"800", "429 with Retry-After", "g\tfp", "inst-a", "0"}, w));
    QVERIFY2(w.number() > 700 && w.number() <= 800, qPrintable(QString::number(w.number())));
    tg::RedisReply msg;
    bool timedOut = false;
    QVERIFY(sub.readPush(msg, timedOut));
    QCOMPARE(msg.elements.size(), std::size_t{3});
    QCOMPARE(QString::fromStdString(msg.elements[2].str).section('\t', 0, 1), QString("g\tfp"));
    QCOMPARE(QString::fromStdString(msg.elements[2].str).section('\t', 3, 3), QString("inst-a"));
    const Lease held = lease(c, "b", 0, 5, 100, 20);
    QCOMPARE(held.granted, 0.0);
    QVERIFY2(held.blockedMs > 600, qPrintable(QString::number(held.blockedMs)));
  }

  void aDeadInstancesLeaseComesBack() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    tg::RedisConnection c(endpoint(redis.port));
    tg::RedisReply r;
    const std::string beat = "inst";
    QVERIFY(c.eval(sc::kHeartbeat, {"t:instances", "t:stats"}, {"a", "{}", "300"}, r));
    QVERIFY(lease(c, "a", 0, 1, 10, 20, 0, 300).granted >= 0);  // the bucket exists (empty)
    QVERIFY(c.call({"HSET", "t:q:g:fp", "lr", "20"}, r));        // as if full
    QCOMPARE(lease(c, "a", 0, 20, 10, 20, 0, 300).granted, 20.0);
    QVERIFY(c.eval(sc::kHeartbeat, {"t:instances", "t:stats"}, {"b", "{}", "300"}, r));
    QCOMPARE(lease(c, "b", 0, 25, 10, 20, 0, 300).granted, 0.0);  // a holds the bucket: 2.5 s away, beyond reach
    sleepMs(450);  // a stops beating; b goes on
    QVERIFY(c.eval(sc::kHeartbeat, {"t:instances", "t:stats"}, {"b", "{}", "300"}, r));
    const Lease after = lease(c, "b", 0, 20, 10, 20, 0, 300);
    // ~4.5 refilled plus a's 20 (capped at the bucket) is there at once; without the return b's lease of 20
    // would be reserved 1.5 s ahead, not usable now.
    QCOMPARE(after.granted, 20.0);
    QCOMPARE(after.readyMs, 0.0);
    QCOMPARE(after.live, 1.0);
    QVERIFY(c.call({"HEXISTS", "t:l:g:fp", "a"}, r));
    QCOMPARE(r.integer, 0LL);
  }

  // A busy instance beats through its lease calls. After a FLUSHALL (or a Redis restarted without its data) the
  // first one counts it alive again: it used to refresh only an entry still there, so the fleet looked smaller
  // until each instance's next stats write.
  void aLeaseCallCountsItsInstanceAfterAFlush() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    tg::RedisConnection c(endpoint(redis.port));
    tg::RedisReply r;
    QVERIFY(c.eval(sc::kHeartbeat, {"t:instances", "t:stats"}, {"a", "{}", "300"}, r));
    QVERIFY(c.call({"FLUSHALL"}, r));
    QVERIFY(c.call({"ZSCORE", "t:instances", "a"}, r));
    QVERIFY(r.type == tg::RedisReply::Type::Nil);
    QVERIFY(lease(c, "a", 0, 1, 10, 20, 0, 300).granted >= 0);
    QVERIFY(c.call({"ZSCORE", "t:instances", "a"}, r));
    QVERIFY2(r.type != tg::RedisReply::Type::Nil, "a lease call left its instance out of the live count");
  }

  void aGiveBackReleasesWhatWasSentToo() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    tg::RedisConnection c(endpoint(redis.port));
    tg::RedisReply r;
    QCOMPARE(lease(c, "a", 0, 1, 10, 20).granted, 1.0);  // reserved: the new bucket starts empty
    QVERIFY(c.call({"HSET", "t:q:g:fp", "lr", "20"}, r));
    QCOMPARE(lease(c, "a", 0, 10, 10, 20).granted, 10.0);
    QCOMPARE(held(c, "t:l:g:fp", "a"), 11.0);
    // 7 of the 11 went out, 4 come back: a holds nothing more. (Without the 7, Redis would go on believing a
    // holds them, and hand them out again as a dead instance's lease.)
    QVERIFY(c.eval(sc::kGiveBack, {"t:q:g:fp", "t:l:g:fp"}, {"a", "4", "0", "7"}, r));
    QVERIFY2(!r.isError(), r.str.c_str());
    QCOMPARE(held(c, "t:l:g:fp", "a"), 0.0);
    // The grants a bare refusal cuts the learnt rate from count what was sent, not what came back.
    QVERIFY(c.call({"HMGET", "t:q:g:fp", "gc", "gp"}, r));
    QCOMPARE(r.elements.at(0).number() + r.elements.at(1).number(), 7.0);
  }

  // --- the ledger, hand-set time --------------------------------------------------------------------

  void ledgerAsksAheadAndFallsBackToAShare() {
    LedgerUnderTest t;
    auto& [ledger, asks, s, t0, wait, why] = t;
    const tg::SharedHint req{100, 10};  // 100/s, a bucket of 10: leases of 5 (half the bucket), 10 ms each
    QVERIFY(!ledger.ready(s, tg::Tier::P1, 0, req, {}, t0, wait, why));
    QCOMPARE(asks.size(), std::size_t{1});
    QCOMPARE(asks[0].requests, 5.0);
    QVERIFY(!ledger.ready(s, tg::Tier::P0, 0, req, {}, t0, wait, why));
    QCOMPARE(asks.size(), std::size_t{1});  // one ask at a time
    ledger.setMode(tg::SharedMode::Shared, 4, t0);
    ledger.onGrant({s, 5, 0, 0, 100, 4, 0}, t0);
    int sent = 0;
    while (ledger.ready(s, tg::Tier::P1, 0, req, {}, t0, wait, why)) {
      ledger.take(s, 0, t0);
      ++sent;
    }
    QCOMPARE(sent, 5);
    QCOMPARE(asks.size(), std::size_t{2});  // asked again at half the lease, before it ran out
    QCOMPARE(asks[1].usedRequests, 3.0);    // what was spent since the last ask goes with the next
    // Redis gone: 100/s over 4 live instances is 25/s for this one, whatever its own quota picture says.
    ledger.setMode(tg::SharedMode::Fallback, 4, t0);
    sent = 0;
    for (int ms = 0; ms < 2000; ++ms) {
      const tg::TimePoint t = t0 + std::chrono::milliseconds(ms);
      while (ledger.ready(s, tg::Tier::P1, 0, req, {}, t, wait, why)) {
        ledger.take(s, 0, t);
        ++sent;
      }
    }
    QVERIFY2(sent >= 49 && sent <= 53, qPrintable(QString::number(sent)));
  }

  void ledgerGivesBackTokensARequestDidNotUse() {
    LedgerUnderTest t;
    auto& [ledger, asks, s, t0, wait, why] = t;
    const tg::SharedHint req{100, 10}, tok{1000, 1000};
    ledger.setMode(tg::SharedMode::Shared, 1, t0);
    QVERIFY(!ledger.ready(s, tg::Tier::P1, 300, req, tok, t0, wait, why));
    ledger.onGrant({s, 5, 1500, 0, 100, 1, 0}, t0);
    QVERIFY(ledger.ready(s, tg::Tier::P1, 300, req, tok, t0, wait, why));
    ledger.take(s, 300, t0);       // reserved 300 tokens ...
    ledger.refundTokens(s, 200);   // ... the response said 100 were used
    asks.clear();
    ledger.sweep(t0 + std::chrono::seconds(2));  // untouched for a while: the lease goes back to the fleet
    QCOMPARE(asks.size(), std::size_t{1});
    QVERIFY(asks[0].giveBack);
    QCOMPARE(asks[0].requests, 4.0);
    QCOMPARE(asks[0].tokens, 1400.0);
  }

  // --- operator actions through Redis (two engines in this process, each its own instance) ----------

  void operatorActionsApplyFleetWide() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    // Nothing is sent: this test is about the operator's commands.
    tg::Engine a(sharedEngine("inst-a", redis.port, "ops-test", "http://127.0.0.1:9")),
        b(sharedEngine("inst-b", redis.port, "ops-test", "http://127.0.0.1:9"));
    std::mutex m;
    std::vector<tg::Event> seenByB;
    b.onEvent([&](const tg::Event& e) {
      std::lock_guard lock(m);
      seenByB.push_back(e);
    });
    a.start();
    b.start();
    QTRY_VERIFY_WITH_TIMEOUT(b.latestSnapshot()->shared.mode == "shared" && a.latestSnapshot()->shared.mode == "shared",
                             5000);
    sleepMs(200);  // both subscribers are listening
    a.setTierPaused(tg::Tier::P2, true, {}, "alice");
    a.setGroupConcurrency("chat", 3, "alice");
    tg::RateCeilingConfig ceiling;
    ceiling.requestsPerS = 7;
    a.setRateCeiling("chat", ceiling, "alice");
    QTRY_VERIFY_WITH_TIMEOUT(b.latestSnapshot()->tierPaused[2], 5000);
    QTRY_COMPARE_WITH_TIMEOUT(b.latestSnapshot()->find("chat")->concurrencyCeiling, 3, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(b.latestSnapshot()->find("chat")->rateCeiling.requestsPerS, 7.0, 5000);
    {
      std::lock_guard lock(m);
      int audited = 0;
      for (const auto& e : seenByB)
        if (e.kind == tg::EventKind::OperatorAction && e.detail.value("actor", "") == "alice on inst-a") ++audited;
      QCOMPARE(audited, 3);
    }
    // Applied on b, not sent back to a a second time (no echo).
    sleepMs(300);
    QVERIFY(a.latestSnapshot()->tierPaused[2]);
    // The fleet view has both, each from its own heartbeat.
    QTRY_COMPARE_WITH_TIMEOUT(b.latestSnapshot()->shared.members.size(), std::size_t{2}, 5000);

    // Another config on the same namespace, with other groups: its "pause P1 on all groups" is not applied here
    // (it paused every group of the first config). Nor is what anyone may publish that is not an action of the
    // right shape: the engine lives on.
    auto other = sharedEngine("inst-c", redis.port, "ops-test", "http://127.0.0.1:9");
    other.groups[0].name = "batch";
    tg::Engine c(other);
    c.start();
    QTRY_VERIFY_WITH_TIMEOUT(c.latestSnapshot()->shared.mode == "shared", 5000);
    sleepMs(200);
    tg::RedisConnection pub(endpoint(redis.port));
    tg::RedisReply r;
    for (const char* junk : {R"({"action": "pause_tier", "tier": "x", "paused": "yes", "instance": 7})",
                             R"({"action": 5, "group": ["chat"], "limit": 1e308})", R"([1, 2])", "not json"})
      QVERIFY(pub.call({"PUBLISH", "ops-test:ops", junk}, r));
    c.setTierPaused(tg::Tier::P1, true, {}, "carol");
    QTRY_VERIFY_WITH_TIMEOUT(c.latestSnapshot()->tierPaused[1], 5000);
    const int globalBefore = a.latestSnapshot()->globalConcurrencyLimit;
    c.setGlobalConcurrency(globalBefore + 5, "carol");
    tg::RateCeilingConfig everything;
    everything.requestsPerS = 3;
    c.setRateCeiling("", everything, "carol");
    QTRY_COMPARE_WITH_TIMEOUT(c.latestSnapshot()->globalConcurrencyLimit, globalBefore + 5, 5000);
    sleepMs(1000);
    for (tg::Engine* e : {&a, &b}) {
      QVERIFY(!e->latestSnapshot()->tierPaused[1]);
      QVERIFY(!e->latestSnapshot()->find("chat")->tierPaused[1]);
      QCOMPARE(e->latestSnapshot()->find("chat")->concurrencyCeiling, 3);
      QCOMPARE(e->latestSnapshot()->globalConcurrencyLimit, globalBefore);
      QCOMPARE(e->latestSnapshot()->globalRateCeiling.requestsPerS, 0.0);
    }
    c.stop();
    a.stop();
    b.stop();
  }

  void aP2FloodOnOneInstanceDoesNotStarveP0OnAnother() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    // 100 requests/s (1,000 per 10 s, the window stated): instance A queues 3,000 P2 requests at once, more
    // than the key allows in the test's whole span; instance B sends a P0 request every 200 ms.
    tg::SimServer sim(tg::SimConfig::fromJson(
        json{{"dialect", "ietf"}, {"groups", {{"chat", {{"algorithm", "sliding-window"}, {"limit", 1000}, {"window_s", 10}}}}}},
        "sim"));
    const int simPort = sim.start();
    const std::string url = "http://127.0.0.1:" + std::to_string(simPort);
    tg::Engine a(sharedEngine("flood", redis.port, "tier-test", url)), b(sharedEngine("interactive", redis.port, "tier-test", url));
    a.start();
    b.start();
    auto request = [](const std::string& id, tg::Tier t) {
      tg::Request r;
      r.id = id;
      r.group = "chat";
      r.tier = t;
      r.url = "/v1/chat/completions";
      r.body = R"({"max_tokens": 1})";
      return r;
    };
    std::atomic<int> floodOk{0};
    for (int i = 0; i < 3000; ++i)
      a.submit(request("p2-" + std::to_string(i), tg::Tier::P2), [&](const tg::Result& r) {
        if (r.status == 200) ++floodOk;
      });
    sleepMs(2000);  // the flood owns the bucket and its reservations
    std::mutex m;
    std::vector<double> p0Waits;
    int p0Failed = 0;
    for (int i = 0; i < 20; ++i) {
      b.submit(request("p0-" + std::to_string(i), tg::Tier::P0), [&](const tg::Result& r) {
        std::lock_guard lock(m);
        if (r.status == 200) p0Waits.push_back(r.waitMs);
        else ++p0Failed;
      });
      sleepMs(200);
    }
    QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(p0Waits.size()) + p0Failed, 20, 10000);
    const json c = chatCounters(sim);
    a.stop();
    b.stop();
    std::sort(p0Waits.begin(), p0Waits.end());
    qInfo("P0 on the other instance: %zu ok, %d failed, wait p50 %.0f ms, max %.0f ms; flood ok %d; upstream %s",
          p0Waits.size(), p0Failed, p0Waits.empty() ? -1.0 : p0Waits[p0Waits.size() / 2],
          p0Waits.empty() ? -1.0 : p0Waits.back(), floodOk.load(), c.dump().substr(0, 200).c_str());
    QCOMPARE(p0Failed, 0);
    // P1/P2 reserve at most a second ahead and P0 skips their reserve: a P0 waits at most about that, not for
    // the 3,000 queued on the other instance (30 s of quota).
    QVERIFY2(p0Waits.back() < 1200, qPrintable(QString::number(p0Waits.back())));
    QVERIFY2(p0Waits[p0Waits.size() / 2] < 150, qPrintable(QString::number(p0Waits[p0Waits.size() / 2])));
    QVERIFY2(floodOk > 300, "the flood used the rest of the quota");
    // Only fingerprints reach Redis: no key name, value or field holds the secret.
    tg::RedisConnection rc(endpoint(redis.port));
    tg::RedisReply keys;
    QVERIFY(rc.call({"KEYS", "*"}, keys));
    QVERIFY(!keys.elements.empty());
    for (const auto& k : keys.elements) {
      QVERIFY2(k.str.find("sk-fleet-secret") == std::string::npos, k.str.c_str());
      tg::RedisReply type, all;
      QVERIFY(rc.call({"TYPE", k.str}, type));
      if (type.str == "hash") QVERIFY(rc.call({"HGETALL", k.str}, all));
      else if (type.str == "zset") QVERIFY(rc.call({"ZRANGE", k.str, "0", "-1"}, all));
      for (const auto& v : all.elements) QVERIFY2(v.str.find("sk-fleet-secret") == std::string::npos, v.str.c_str());
    }
    QVERIFY2(c["r429"].get<int>() <= 0.01 * c["requests"].get<int>(), c.dump().substr(0, 300).c_str());
  }

  // A request that never went (past its deadline in the queue, cancelled) spends nothing of the fleet's
  // quota: the lease asked for it goes back, and what Redis believes this instance holds ends at zero.
  void requestsNeverSentGiveTheirLeaseBack() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    // No headers: the configured 6,000/min (98/s at the bucket fraction) is the rate.
    tg::SimServer sim(chatSim("none", "fixed-window", 100000, 10));
    const int simPort = sim.start();
    tg::EngineConfig cfg =
        sharedEngine("inst-a", redis.port, "refund-test", "http://127.0.0.1:" + std::to_string(simPort));
    cfg.groups[0].requestsPerMinute = 6000;
    tg::Engine a(cfg);
    a.start();
    QTRY_VERIFY_WITH_TIMEOUT(a.latestSnapshot()->shared.mode == "shared", 5000);
    std::mutex m;
    int ok = 0, notSent = 0, other = 0;
    auto done = [&](const tg::Result& r) {
      std::lock_guard lock(m);
      if (r.status == 200) ++ok;
      else if (r.status == 0 && (r.error == tg::ErrorKind::Shed || r.error == tg::ErrorKind::Cancelled)) ++notSent;
      else ++other;
    };
    auto request = [](int i, double deadlineS) {
      tg::Request r;
      r.id = "r" + std::to_string(i);
      r.group = "chat";
      r.tier = tg::Tier::P1;
      r.url = "/v1/chat/completions";
      r.body = R"({"max_tokens": 1})";
      r.deadlineS = deadlineS;
      return r;
    };
    auto count = [&] {
      std::lock_guard lock(m);
      return ok + notSent + other;
    };
    tg::RedisConnection rc(endpoint(redis.port));
    // 1. Another instance has reserved 70 requests of the new (empty) bucket, so this one's first lease is
    //    reserved most of a second ahead, and these requests are gone long before it comes due: ten past a
    //    50-ms deadline, ten cancelled. (The deadline is enforced by the engine's sweep: a lease due sooner
    //    could still send a request whose deadline passed since the last sweep.)
    const std::string fp = tg::keyFingerprint("sk-fleet-secret-0123456789");
    tg::RedisReply hog;
    QVERIFY(rc.eval(sc::kLease, {"refund-test:q:chat:" + fp, "refund-test:l:chat:" + fp, "refund-test:instances"},
                    {"hog", "1", "70", "0", "98", "0", "19.6", "0.25", "0", "600000", "1000", "0", "0.2"}, hog));
    QVERIFY2(!hog.isError() && hog.elements.size() >= 7 && hog.elements[0].number() == 70, hog.str.c_str());
    for (int i = 0; i < 10; ++i) a.submit(request(i, 0.05), done);
    std::vector<tg::RequestHandle> handles;
    for (int i = 10; i < 20; ++i) handles.push_back(a.submit(request(i, 0), done));
    sleepMs(20);
    for (tg::RequestHandle h : handles) a.cancel(h);
    QTRY_COMPARE_WITH_TIMEOUT(count(), 20, 5000);
    const std::string key = leaseHashKey(rc, "refund-test");
    QVERIFY2(!key.empty(), "a lease was asked for the queued requests");
    const double reserved = held(rc, key, "inst-a");
    const qint64 goneAt = nowMs();
    QTRY_VERIFY_WITH_TIMEOUT(held(rc, key, "inst-a") == 0.0, 4000);
    const qint64 backAfter = nowMs() - goneAt;
    const int sentUnsent = chatCounters(sim)["requests"].get<int>();
    // 2. Five sent, then nothing: what was sent leaves the outstanding lease, the rest goes back.
    for (int i = 20; i < 25; ++i) a.submit(request(i, 0), done);
    QTRY_COMPARE_WITH_TIMEOUT(count(), 25, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(held(rc, key, "inst-a") == 0.0, 4000);
    const json c = chatCounters(sim);
    a.stop();
    qInfo("never sent: %d, sent %d (upstream saw %d during the unsent phase, %d in all); held %.0f for them, "
          "back to 0 after %lld ms",
          notSent, ok, sentUnsent, c["requests"].get<int>(), reserved, backAfter);
    QCOMPARE(notSent, 20);
    QCOMPARE(ok, 5);
    QCOMPARE(other, 0);
    QCOMPARE(sentUnsent, 0);
    QVERIFY2(reserved >= 1, "a lease was reserved for the requests that never went");
  }

  // --- a fleet of processes ------------------------------------------------------------------------

  void threeInstancesShareOneKey() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    // 20 requests/s as a sliding window of 60 per 3 s; each instance alone offers the whole limit.
    const double seconds = 12, limit = 20;
    auto run = [&](bool shared) {
      tg::SimServer sim(tg::SimConfig::fromJson(
          json{{"dialect", "ietf"},  // RateLimit-Policy states the window: the fleet's rate is limit / window
               {"groups", {{"chat", {{"algorithm", "sliding-window"}, {"limit", 60}, {"window_s", 3}}}}}},
          "sim"));
      const int simPort = sim.start();
      QTemporaryDir dir;
      Fleet fleet;
      fleet.start(3, fleetConfig(simPort, redis.port, limit, shared), dir.path(), seconds);
      sleepMs(3000);
      const json a = chatCounters(sim);
      sleepMs(7000);
      const json b = chatCounters(sim);
      const bool ok = fleet.wait();
      const json total = chatCounters(sim);
      const double okRate = (b["ok"].get<double>() - a["ok"].get<double>()) / 7.0;
      const double share429 = total["r429"].get<double>() / std::max(1.0, total["requests"].get<double>());
      qInfo("%s: 3 instances, ok %.1f/s of %.0f/s (%.0f%%), 429 share %.2f%% (%s)", shared ? "shared" : "alone",
            okRate, limit, 100 * okRate / limit, 100 * share429, total.dump().c_str());
      if (!ok) qWarning("%s", qPrintable(fleet.err(0)));
      return std::make_pair(okRate, share429);
    };
    const auto [alone, alone429] = run(false);
    const auto [shared, shared429] = run(true);
    QVERIFY2(shared >= 0.95 * limit, qPrintable(QString("shared goodput %1/s").arg(shared)));
    QVERIFY2(shared429 <= 0.01, qPrintable(QString("shared 429 share %1").arg(shared429)));
    // Alone, each instance believes it owns the key: the fleet pays for it in 429s.
    QVERIFY2(alone429 > 5 * std::max(shared429, 0.002), qPrintable(QString("alone 429 share %1").arg(alone429)));
  }

  void oneInstancesRetryAfterPausesTheFleet() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    // A fixed window of 30 per 3 s whose limit drops to 9 at 4 s: the fleet, paced at the old rate, is
    // refused with Retry-After (the time to the window's end). Whoever is refused, nobody may come back
    // before that time: the simulator counts every request of the key inside a wait it announced as early.
    tg::SimServer sim(tg::SimConfig::fromJson(
        json{{"dialect", "x-ratelimit"},
             {"retry_after", true},
             {"groups", {{"chat", {{"algorithm", "fixed-window"}, {"limit", 30}, {"window_s", 3}}}}},
             {"schedule", json::array({{{"at_s", 4}, {"action", "scale_quota"}, {"group", "*"}, {"factor", 0.3}}})}},
        "sim"));
    const int simPort = sim.start();
    QTemporaryDir dir;
    Fleet fleet;
    fleet.start(3, fleetConfig(simPort, redis.port, 10, true), dir.path(), 10);
    QVERIFY(fleet.wait());
    const json c = chatCounters(sim);
    int held = 0;
    for (int i = 0; i < 3; ++i) held += fleet.err(i).count("held until");
    qInfo("simulator: %s; holds heard from another instance: %d", c.dump().c_str(), held);
    QVERIFY2(c["r429"].get<int>() >= 1, "the limit drop refused someone (else this test proves nothing)");
    QVERIFY2(held >= 1, "an instance was held by another's 429");
    QCOMPARE(c["early"].get<int>(), 0);
  }

  void redisOutageFallsBackAndRecovers() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    const int redisPort = redis.port;
    tg::SimServer sim(tg::SimConfig::fromJson(
        json{{"dialect", "ietf"},
             {"groups", {{"chat", {{"algorithm", "sliding-window"}, {"limit", 600}, {"window_s", 30}}}}}},
        "sim"));
    const int simPort = sim.start();
    const double limit = 20;
    QTemporaryDir dir;
    Fleet fleet;
    fleet.start(3, fleetConfig(simPort, redisPort, limit, true), dir.path(), 17);
    sleepMs(4000);
    const qint64 killedAt = nowMs();
    const json beforeOutage = chatCounters(sim);
    redis.kill();
    sleepMs(5000);
    const json endOutage = chatCounters(sim);
    const qint64 restartedAt = nowMs();
    RedisProcess again;
    QVERIFY2(again.start(&why, redisPort), qPrintable(why));
    sleepMs(3000);
    // kill -9 one instance: the others take its part of the quota.
    fleet.procs[2]->kill();
    sleepMs(1000);
    const json afterKill = chatCounters(sim);
    sleepMs(3000);
    const json end = chatCounters(sim);
    fleet.wait();

    const double outageRequests = endOutage["requests"].get<double>() - beforeOutage["requests"].get<double>();
    const double outage429 = endOutage["r429"].get<double>() - beforeOutage["r429"].get<double>();
    const double outageOk = (endOutage["ok"].get<double>() - beforeOutage["ok"].get<double>()) / 5.0;
    const double twoOk = (end["ok"].get<double>() - afterKill["ok"].get<double>()) / 3.0;
    qInfo("outage: %.0f requests, %.0f 429s, ok %.1f/s; after kill -9 of one instance: ok %.1f/s of %.0f/s",
          outageRequests, outage429, outageOk, twoOk, limit);
    for (int i = 0; i < 3; ++i) {
      const QString log = fleet.err(i);
      const qint64 fellBack = firstLineAfter(log, "Redis unreachable", killedAt);
      const qint64 resumed = firstLineAfter(log, "shared with the fleet", restartedAt);
      qInfo("instance %d: fallback %lld ms after the kill, shared again %lld ms after the restart", i,
            fellBack < 0 ? -1 : fellBack - killedAt, resumed < 0 ? -1 : resumed - restartedAt);
      QVERIFY2(fellBack >= 0 && fellBack - killedAt <= 1000, qPrintable(log.right(2000)));
      QVERIFY2(resumed >= 0 && resumed - restartedAt <= 2000, qPrintable(log.right(2000)));
    }
    QVERIFY2(outage429 <= 0.05 * std::max(1.0, outageRequests), "429 share during the outage above 5%");
    QVERIFY2(outageOk >= 0.7 * limit, "fallback keeps most of the quota in use");
    QVERIFY2(twoOk >= 0.85 * limit, "two instances take the killed one's part");
    // A restarted Redis lost every bucket: they start empty, so the restart costs no storm.
    const double after429 = end["r429"].get<double>() - endOutage["r429"].get<double>();
    const double afterRequests = end["requests"].get<double>() - endOutage["requests"].get<double>();
    qInfo("after the restart: %.0f requests, %.0f 429s", afterRequests, after429);
    QVERIFY2(after429 <= 0.01 * std::max(1.0, afterRequests), "429s after Redis came back");
  }

  // kill -9 of one instance: Redis counts it dead one heartbeat after its last sign of life and hands its
  // outstanding lease back to the bucket at the next lease call of anyone.
  void aKilledInstancesLeaseReturnsWithinAHeartbeat() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    tg::SimServer sim(chatSim("ietf", "sliding-window", 60, 3));
    const int simPort = sim.start();
    const int heartbeatMs = 250;
    const double limit = 20;
    QTemporaryDir dir;
    Fleet fleet;
    fleet.start(3, fleetConfig(simPort, redis.port, limit, true, heartbeatMs), dir.path(), 10);
    sleepMs(4000);
    tg::RedisConnection rc(endpoint(redis.port));
    const std::string key = leaseHashKey(rc, "fleet-test");
    QVERIFY2(!key.empty(), "the fleet leases");
    double heldWhenKilled = -1;
    for (int i = 0; i < 100 && heldWhenKilled < 0; ++i, sleepMs(10)) heldWhenKilled = held(rc, key, "inst-2");
    QVERIFY2(heldWhenKilled >= 0, "the instance to kill has an outstanding lease entry");
    const qint64 killedAt = nowMs();
    fleet.procs[2]->kill();  // SIGKILL: no goodbye, its lease is still counted as held
    qint64 returnedAt = -1;
    while (returnedAt < 0 && nowMs() - killedAt < 3000) {
      if (held(rc, key, "inst-2") < 0) returnedAt = nowMs();
      else sleepMs(2);
    }
    sleepMs(500);
    const json afterKill = chatCounters(sim);
    sleepMs(3000);
    const json end = chatCounters(sim);
    fleet.wait();
    const double twoOk = (end["ok"].get<double>() - afterKill["ok"].get<double>()) / 3.0;
    qInfo("kill -9 of an instance holding %.1f requests: its lease returned %lld ms after the kill (dead after "
          "%d ms of silence); the other two at %.1f/s of %.0f/s",
          heldWhenKilled, returnedAt < 0 ? -1 : returnedAt - killedAt, heartbeatMs, twoOk, limit);
    QVERIFY2(returnedAt >= 0, "the killed instance's lease never returned");
    // Its last sign of life came at most just before the kill; one heartbeat later the next lease call of
    // the others (every ~100 ms at this rate) returns it. The margin is for a busy machine.
    QVERIFY2(returnedAt - killedAt <= heartbeatMs + 150, qPrintable(QString::number(returnedAt - killedAt)));
    QVERIFY2(twoOk >= 0.85 * limit, qPrintable(QString("two instances at %1/s").arg(twoOk)));
    QVERIFY2(end["r429"].get<int>() <= 0.01 * end["requests"].get<int>(), end.dump().c_str());
  }

  // A headerless upstream (bare 429s): the rate one instance learns from its refusals is the fleet's, so an
  // instance that starts later is paced at it from its first lease instead of finding it out with 429s.
  void aLearntRateIsTheFleets() {
    RedisProcess redis;
    QString why;
    QVERIFY2(redis.start(&why), qPrintable(why));
    const double limit = 20;
    tg::SimServer sim(chatSim("none", "token-bucket", limit, 1));
    const int simPort = sim.start();
    QTemporaryDir dir;
    json learnerCfg = fleetConfig(simPort, redis.port, 3 * limit, true);
    learnerCfg["shared_quota"]["instance"] = "learner";
    Fleet learner;
    learner.start(1, learnerCfg, dir.path(), 8);
    QVERIFY(learner.wait());
    const json learnt = chatCounters(sim);
    tg::RedisConnection rc(endpoint(redis.port));
    tg::RedisReply keys, scope;
    QVERIFY(rc.call({"KEYS", "fleet-test:q:*"}, keys));
    QCOMPARE(keys.elements.size(), std::size_t{1});
    QVERIFY(rc.call({"HMGET", keys.elements[0].str, "rate", "learnt"}, scope));
    const double fleetRate = scope.elements.at(0).number();
    QCOMPARE(scope.elements.at(1).number(), 1.0);
    QVERIFY2(fleetRate > 0.5 * limit && fleetRate < 1.3 * limit, qPrintable(QString::number(fleetRate)));

    json laterCfg = learnerCfg;
    laterCfg["shared_quota"]["instance"] = "later";
    QTemporaryDir dir2;
    Fleet later;
    // The upstream's bucket fills up again meanwhile: what follows is the later instance's own pacing, not
    // the refusals the learner's last sends left it (those cut the rate further, which is not this test's).
    sleepMs(1500);
    const json idle = chatCounters(sim);
    const qint64 startedAt = nowMs();
    later.start(1, laterCfg, dir2.path(), 5);
    sleepMs(2000);
    const json early = chatCounters(sim);
    const double earlyS = (nowMs() - startedAt) / 1000.0;
    QVERIFY(later.wait());
    const json end = chatCounters(sim);
    const double earlyRequests = early["requests"].get<double>() - idle["requests"].get<double>();
    const double early429 = early["r429"].get<double>() - idle["r429"].get<double>();
    const double laterOk = (end["ok"].get<double>() - idle["ok"].get<double>()) / 5.0;
    qInfo("learnt by the first instance: %.1f/s (the upstream allows %.0f/s; it saw %d 429s learning it); the "
          "later one offering %.0f/s sent %.0f in its first %.1f s (%.1f/s), %.0f of them refused; %.1f/s ok over "
          "its run",
          fleetRate, limit, learnt["r429"].get<int>(), 3 * limit, earlyRequests, earlyS, earlyRequests / earlyS,
          early429, laterOk);
    // Offering three times the limit, it would send ~60/s until refused; paced at the fleet's rate (which grows
    // 5% a second between refusals, plus a bucket of 0.2 s of it), it stays near that rate from the start, and
    // is not starved either.
    QVERIFY2(earlyRequests <= fleetRate * (1.15 * earlyS + 0.3) + 2, qPrintable(QString::number(earlyRequests)));
    QVERIFY2(earlyRequests >= 0.5 * fleetRate * earlyS, qPrintable(QString::number(earlyRequests)));
    QVERIFY2(early429 <= std::max(2.0, 0.05 * earlyRequests), qPrintable(QString::number(early429)));
  }

  // The Redis password (from its environment variable) shows up nowhere a run writes: log lines, progress
  // output, the report, the history file's events and metrics; also not while Redis is down or refuses it.
  void theRedisPasswordNeverShows() {
    const QString password = "tg-redis-pw-5b1e9c77";
    // At start a server that wants another password: authentication refused, logged with Redis's words.
    RedisProcess wrong;
    QString why;
    QVERIFY2(wrong.start(&why, 0, {"--requirepass", "another-one-a1b2"}), qPrintable(why));
    const int redisPort = wrong.port;
    tg::SimServer sim(chatSim("ietf", "sliding-window", 60, 3));
    const int simPort = sim.start();
    json cfg = fleetConfig(simPort, redisPort, 10, true);
    cfg["shared_quota"]["password_env"] = "TG_TEST_REDIS_PASSWORD";
    QProcessEnvironment env;
    env.insert("TG_TEST_REDIS_PASSWORD", password);
    QTemporaryDir dir;
    Fleet fleet;
    fleet.start(2, cfg, dir.path(), 9, env, true);
    sleepMs(1500);
    wrong.kill();
    RedisProcess redis;  // the right one: shared
    QVERIFY2(redis.start(&why, redisPort, {"--requirepass", password}), qPrintable(why));
    sleepMs(2000);
    redis.kill();  // down: connection refused, logged
    sleepMs(1500);
    RedisProcess again;
    QVERIFY2(again.start(&why, redisPort, {"--requirepass", password}), qPrintable(why));
    QVERIFY(fleet.wait());
    QString logs;
    int files = 0;
    QDirIterator it(dir.path(), QDir::Files);
    while (it.hasNext()) {
      QFile f(it.next());
      QVERIFY(f.open(QIODevice::ReadOnly));
      const QByteArray bytes = f.readAll();
      ++files;
      QVERIFY2(!bytes.contains(password.toUtf8()), qPrintable(f.fileName()));
      if (f.fileName().contains("/err") || f.fileName().contains("/out")) logs += QString::fromUtf8(bytes);
    }
    qInfo("%d files of 2 runs checked (logs, progress, reports, history with events and metrics)", files);
    // The runs did meet each kind of trouble, so the check above covers the error paths.
    QVERIFY2(logs.contains("Redis unreachable"), qPrintable(logs.right(2000)));
    QVERIFY2(logs.contains("authentication refused"), qPrintable(logs.right(2000)));
    QVERIFY2(logs.contains("shared with the fleet"), qPrintable(logs.right(2000)));
  }
};

QTEST_GUILESS_MAIN(TestSharedQuota)
#include "test_shared_quota.moc"
