// SimServer streaming over real loopback sockets: "stream": true gets an SSE response whose events arrive
// over time (OpenAI chunks with and without the usage chunk, Anthropic Messages events), with the same limits
// and token accounting as a JSON answer, while the loop keeps serving others; the stream counters and the
// per-path request counts in the stats.
#include "sim_server.h"
#include "sim_test_client.h"

#include <QtTest>

#include <chrono>
#include <thread>

using namespace tg;
using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

namespace {

SimConfig configFrom(const char* text) { return SimConfig::fromJson(json::parse(text), "test"); }

double msSince(SteadyClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
}

struct SseEvent {
  std::string name;  // "event:" line; empty for data-only events (OpenAI)
  std::string data;
  double atMs = 0;   // arrival, from the request's send
};

struct SseRun {
  SimTestResponse head;
  std::vector<SseEvent> events;
  bool ended = false;    // the last chunk (or the close of a close-delimited body) arrived
  std::string trailing;  // bytes after the last blank line: an event not ended by one
};

// Splits complete SSE events ("...\n\n") off `buf`, stamping them with the time they completed.
void takeEvents(std::string& buf, double atMs, std::vector<SseEvent>& out) {
  std::size_t end;
  while ((end = buf.find("\n\n")) != std::string::npos) {
    SseEvent e;
    e.atMs = atMs;
    std::size_t pos = 0;
    const std::string block = buf.substr(0, end);
    while (pos <= block.size()) {
      std::size_t nl = block.find('\n', pos);
      if (nl == std::string::npos) nl = block.size();
      const std::string line = block.substr(pos, nl - pos);
      if (line.rfind("event: ", 0) == 0) e.name = line.substr(7);
      else if (line.rfind("data: ", 0) == 0) e.data = line.substr(6);
      pos = nl + 1;
    }
    out.push_back(std::move(e));
    buf.erase(0, end + 2);
  }
}

// Sends a POST and reads the whole streamed answer chunk by chunk, recording when each event arrived.
SseRun streamRequest(SimTestClient& c, const std::string& body, const SimTestClient::Headers& headers = {},
                     double* headMs = nullptr) {
  SseRun run;
  const auto t0 = SteadyClock::now();
  if (!c.sendRaw(SimTestClient::format("POST", "/v1/chat/completions", headers, body))) return run;
  run.head = c.readHead();
  if (headMs) *headMs = msSince(t0);
  if (run.head.status != 200) return run;
  std::string buf;
  while (auto chunk = c.readChunk()) {
    if (chunk->empty()) {
      run.ended = true;
      break;
    }
    buf += *chunk;
    takeEvents(buf, msSince(t0), run.events);
  }
  run.trailing = buf;
  return run;
}

json dataOf(const SseEvent& e) { return json::parse(e.data); }

std::string chatBody(int maxTokens, bool includeUsage) {
  json b = {{"model", "gpt-sim"}, {"stream", true}, {"max_tokens", maxTokens},
            {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}};
  if (includeUsage) b["stream_options"] = {{"include_usage", true}};
  return b.dump();
}

const char* kFastOpenAi = R"({"dialect":"openai","stream_ttft_ms":0,"stream_chunk_interval_ms":1,"stream_chunks":3,
  "default_group":"g","groups":{"g":{"limit":100,"window_s":60,"tokens_per_window":100000}}})";

}  // namespace

class TestSimStream : public QObject {
  Q_OBJECT

 private slots:
  void openAiEventSequence_data();
  void openAiEventSequence();
  void sameTokenCostAsJsonAnswer();
  void anthropicEventSequence();
  void eventsArriveOverTime();
  void othersServedWhileStreamWaits();
  void clientDisconnectIsCountedAndFreed();
  void limitedStreamGets429();
  void pipelinedAfterStreamKeepsOrder();
  void http10IsCloseDelimited();
  void requestsCountedPerPath();
};

void TestSimStream::openAiEventSequence_data() {
  QTest::addColumn<bool>("includeUsage");
  QTest::newRow("without usage") << false;
  QTest::newRow("include_usage") << true;
}

void TestSimStream::openAiEventSequence() {
  QFETCH(bool, includeUsage);
  SimServer sim(configFrom(kFastOpenAi));
  SimTestClient c(sim.start());
  const std::string body = chatBody(10, includeUsage);
  const SseRun run = streamRequest(c, body);
  QCOMPARE(run.head.status, 200);
  QVERIFY2(run.head.header("content-type").rfind("text/event-stream", 0) == 0, run.head.header("content-type").c_str());
  QCOMPARE(run.head.header("transfer-encoding"), std::string("chunked"));
  QVERIFY(!run.head.has("content-length"));
  QVERIFY(run.head.has("x-ratelimit-remaining-requests"));  // the dialect's headers, as on a JSON answer
  QVERIFY(run.ended);
  QVERIFY2(run.trailing.empty(), run.trailing.c_str());  // every event ended with a blank line

  // role chunk, 3 content chunks, finish chunk, [usage chunk], [DONE]
  const std::size_t want = 1 + 3 + 1 + (includeUsage ? 1 : 0) + 1;
  QCOMPARE(run.events.size(), want);
  QCOMPARE(run.events.back().data, std::string("[DONE]"));
  std::string id, text;
  for (std::size_t i = 0; i + 1 < run.events.size(); ++i) {
    const auto& e = run.events[i];
    QVERIFY2(e.name.empty(), e.name.c_str());
    const json j = dataOf(e);
    QCOMPARE(j["object"].get<std::string>(), std::string("chat.completion.chunk"));
    QCOMPARE(j["model"].get<std::string>(), std::string("gpt-sim"));
    QVERIFY(j["created"].is_number_integer());
    if (i == 0) id = j["id"].get<std::string>();
    QCOMPARE(j["id"].get<std::string>(), id);  // one id for the whole completion
    QCOMPARE(j.contains("usage"), includeUsage);
    const bool usageChunk = includeUsage && i + 2 == run.events.size();
    if (usageChunk) {
      QVERIFY(j["choices"].is_array() && j["choices"].empty());
      const auto& u = j["usage"];
      // Same accounting as the JSON answer: prompt = body bytes / 4, completion = max_tokens / 2.
      QCOMPARE(u["prompt_tokens"].get<int>(), int(body.size() / 4));
      QCOMPARE(u["completion_tokens"].get<int>(), 5);
      QCOMPARE(u["total_tokens"].get<int>(), int(body.size() / 4) + 5);
      continue;
    }
    if (includeUsage) QVERIFY2(j["usage"].is_null(), e.data.c_str());
    QCOMPARE(j["choices"].size(), std::size_t(1));
    const auto& choice = j["choices"][0];
    QCOMPARE(choice["index"].get<int>(), 0);
    if (i == 0) {
      QCOMPARE(choice["delta"], json({{"role", "assistant"}, {"content", ""}}));
      QVERIFY(choice["finish_reason"].is_null());
    } else if (i <= 3) {
      QVERIFY(choice["finish_reason"].is_null());
      text += choice["delta"]["content"].get<std::string>();
    } else {
      QCOMPARE(choice["delta"], json::object());
      QCOMPARE(choice["finish_reason"].get<std::string>(), std::string("stop"));
    }
  }
  QVERIFY2(id.rfind("chatcmpl-", 0) == 0, id.c_str());
  QCOMPARE(text, std::string(" tok tok tok tok tok"));  // five completion tokens over three chunks

  // The connection is kept alive after the stream, and the counters saw one complete stream.
  QCOMPARE(c.request("GET", "/v1/models").status, 200);
  const json s = sim.stats();
  QCOMPARE(s["totals"]["streams_started"].get<int>(), 1);
  QCOMPARE(s["totals"]["streams_completed"].get<int>(), 1);
  QCOMPARE(s["totals"]["streams_aborted"].get<int>(), 0);
  QCOMPARE(s["groups"]["g"]["streams_completed"].get<int>(), 1);
  QCOMPARE(s["totals"]["in_flight"].get<int>(), 0);
}

// The limiter's token dimension is charged the same for a stream as for the JSON answer to the same body size.
void TestSimStream::sameTokenCostAsJsonAnswer() {
  SimServer sim(configFrom(kFastOpenAi));
  SimTestClient c(sim.start());
  // Two bodies of the same length, one streamed: the prompt tokens (bytes / 4) are the same.
  std::string streamBody = chatBody(40, true);
  json plain = json::parse(streamBody);
  plain["stream"] = false;
  std::string plainBody = plain.dump();
  QVERIFY(plainBody.size() >= streamBody.size());
  streamBody.insert(streamBody.size() - 1, std::string(plainBody.size() - streamBody.size(), ' '));
  QCOMPARE(plainBody.size(), streamBody.size());

  const SimTestClient::Headers h = {{"Content-Type", "application/json"}};
  const auto first = c.request("POST", "/v1/chat/completions", h, plainBody);
  QCOMPARE(first.status, 200);
  const int afterJson = std::stoi(first.header("x-ratelimit-remaining-tokens"));
  const SseRun run = streamRequest(c, streamBody, h);
  QVERIFY(run.ended);
  const int afterStream = std::stoi(run.head.header("x-ratelimit-remaining-tokens"));
  const int cost = int(streamBody.size() / 4) + 40;
  QCOMPARE(100000 - afterJson, cost);
  QCOMPARE(afterJson - afterStream, cost);
  const json usage = dataOf(run.events[run.events.size() - 2])["usage"];
  QCOMPARE(json::parse(first.body)["usage"], usage);
  QCOMPARE(sim.stats()["totals"]["tokens"].get<int>(), 2 * usage["total_tokens"].get<int>());
}

void TestSimStream::anthropicEventSequence() {
  SimServer sim(configFrom(R"({"dialect":"anthropic","stream_ttft_ms":0,"stream_chunk_interval_ms":1,
                               "groups":{"default":{"limit":10,"window_s":60,"tokens_per_window":100000}}})"));
  SimTestClient c(sim.start());
  const std::string body = chatBody(8, false);  // completion 4 tokens: 4 chunks when derived
  const SseRun run = streamRequest(c, body, {{"x-api-key", "sk-ant-test"}});
  QCOMPARE(run.head.status, 200);
  QVERIFY(run.head.has("anthropic-ratelimit-requests-remaining"));
  QVERIFY(run.ended);
  QVERIFY2(run.trailing.empty(), run.trailing.c_str());
  std::vector<std::string> names;
  for (const auto& e : run.events) names.push_back(e.name);
  const std::vector<std::string> want = {"message_start",       "content_block_start", "ping",
                                         "content_block_delta", "content_block_delta", "content_block_delta",
                                         "content_block_delta", "content_block_stop",  "message_delta",
                                         "message_stop"};
  QCOMPARE(names, want);
  std::string text;
  for (const auto& e : run.events) {
    const json j = dataOf(e);
    QCOMPARE(j["type"].get<std::string>(), e.name);  // the data names its event, as Anthropic's does
    if (e.name == "message_start") {
      QVERIFY(j["message"]["id"].get<std::string>().rfind("msg_", 0) == 0);
      QCOMPARE(j["message"]["role"].get<std::string>(), std::string("assistant"));
      QCOMPARE(j["message"]["model"].get<std::string>(), std::string("gpt-sim"));
      QCOMPARE(j["message"]["usage"]["input_tokens"].get<int>(), int(body.size() / 4));
    } else if (e.name == "content_block_delta") {
      QCOMPARE(j["index"].get<int>(), 0);
      QCOMPARE(j["delta"]["type"].get<std::string>(), std::string("text_delta"));
      text += j["delta"]["text"].get<std::string>();
    } else if (e.name == "message_delta") {
      QCOMPARE(j["delta"]["stop_reason"].get<std::string>(), std::string("end_turn"));
      QCOMPARE(j["usage"]["output_tokens"].get<int>(), 4);
    }
  }
  QCOMPARE(text, std::string(" tok tok tok tok"));
  QCOMPARE(sim.stats()["totals"]["streams_completed"].get<int>(), 1);
}

// ttft 200 ms, 100 ms between 5 chunks: the head comes at once, the first event after ~ttft, the last
// >= 400 ms after the first. Generous bounds: the server never writes early, a loaded machine may be late.
void TestSimStream::eventsArriveOverTime() {
  SimServer sim(configFrom(R"({"dialect":"openai","stream_ttft_ms":200,"stream_chunk_interval_ms":100,
                               "stream_chunks":5})"));
  SimTestClient c(sim.start());
  double headMs = 0;
  const SseRun run = streamRequest(c, chatBody(10, false), {}, &headMs);
  QVERIFY(run.ended);
  QCOMPARE(run.events.size(), std::size_t(1 + 5 + 1 + 1));
  QVERIFY2(headMs < 150, qPrintable(QString("head after %1 ms").arg(headMs)));
  const double first = run.events.front().atMs;
  const double last = run.events[5].atMs;  // the fifth content chunk
  QVERIFY2(first >= 195 && first < 1500, qPrintable(QString("first event after %1 ms").arg(first)));
  QVERIFY2(last - first >= 350, qPrintable(QString("last %1 ms, first %2 ms").arg(last).arg(first)));
  QVERIFY2(last >= 595, qPrintable(QString("last event after %1 ms").arg(last)));
  for (std::size_t i = 2; i <= 5; ++i)  // each content chunk is its own write, not a burst at the end
    QVERIFY2(run.events[i].atMs - run.events[i - 1].atMs >= 50,
             qPrintable(QString("chunk %1 %2 ms after the one before").arg(i).arg(run.events[i].atMs -
                                                                                     run.events[i - 1].atMs)));
}

// While a stream waits 600 ms between chunks, another client's request (JSON and stream) is answered at once.
void TestSimStream::othersServedWhileStreamWaits() {
  SimServer sim(configFrom(R"({"dialect":"openai","stream_ttft_ms":0,"stream_chunk_interval_ms":600,
                               "stream_chunks":3})"));
  const int port = sim.start();
  SimTestClient a(port);
  QVERIFY(a.sendRaw(SimTestClient::format("POST", "/v1/chat/completions", {}, chatBody(10, false))));
  QCOMPARE(a.readHead().status, 200);
  const auto firstChunk = a.readChunk();  // role + first content chunk; the next is 600 ms away
  QVERIFY(firstChunk && !firstChunk->empty());
  const auto paused = SteadyClock::now();

  SimTestClient b(port);
  QCOMPARE(b.request("POST", "/v1/chat/completions", {}, R"({"max_tokens":4})").status, 200);
  QCOMPARE(b.request("GET", "/__sim/stats").status, 200);
  QVERIFY2(msSince(paused) < 300, qPrintable(QString("answered %1 ms into the pause").arg(msSince(paused))));
  QCOMPARE(sim.stats()["totals"]["streams_completed"].get<int>(), 0);  // a was still waiting meanwhile

  // A second stream runs alongside the first.
  SimTestClient d(port);
  QVERIFY(d.sendRaw(SimTestClient::format("POST", "/v1/chat/completions", {}, chatBody(10, false))));
  QCOMPARE(d.readHead().status, 200);
  QVERIFY(d.readChunk().has_value());
  QVERIFY(waitFor([&] { return sim.stats()["totals"]["streams_started"].get<int>() == 2; }));
  QVERIFY2(msSince(paused) < 500, qPrintable(QString("second stream started %1 ms in").arg(msSince(paused))));

  QVERIFY(a.readChunkedBody().has_value());
  QVERIFY(waitFor([&] { return sim.stats()["totals"]["streams_completed"].get<int>() >= 1; }));
}

void TestSimStream::clientDisconnectIsCountedAndFreed() {
  SimServer sim(configFrom(R"({"dialect":"openai","stream_ttft_ms":0,"stream_chunk_interval_ms":150,
                               "stream_chunks":8})"));
  const int port = sim.start();
  {
    SimTestClient a(port);
    QVERIFY(a.sendRaw(SimTestClient::format("POST", "/v1/chat/completions", {}, chatBody(16, false))));
    QCOMPARE(a.readHead().status, 200);
    QVERIFY(a.readChunk().has_value());
    QCOMPARE(sim.stats()["totals"]["in_flight"].get<int>(), 1);
    a.close();
  }
  // Noticed at the latest when the next chunk's write meets the reset, well before the stream would end.
  QVERIFY(waitFor([&] { return sim.stats()["totals"]["streams_aborted"].get<int>() == 1; },
                  std::chrono::milliseconds(1000)));
  const json s = sim.stats();
  QCOMPARE(s["totals"]["streams_started"].get<int>(), 1);
  QCOMPARE(s["totals"]["streams_completed"].get<int>(), 0);
  QCOMPARE(s["totals"]["in_flight"].get<int>(), 0);
  QCOMPARE(s["groups"]["default"]["streams_aborted"].get<int>(), 1);

  // The server keeps serving, streams included.
  SimTestClient b(port);
  QCOMPARE(b.request("GET", "/v1/models").status, 200);
  QVERIFY(b.sendRaw(SimTestClient::format("POST", "/v1/chat/completions", {}, chatBody(2, false))));
  QCOMPARE(b.readHead().status, 200);
  QVERIFY(b.readChunkedBody().has_value());
  QCOMPARE(sim.stats()["totals"]["streams_completed"].get<int>(), 1);
  QCOMPARE(sim.stats()["totals"]["streams_aborted"].get<int>(), 1);
}

// Limits are decided before the stream: over quota a stream request gets the dialect's 429, not a stream.
void TestSimStream::limitedStreamGets429() {
  SimServer sim(configFrom(R"({"dialect":"openai","stream_ttft_ms":0,"stream_chunk_interval_ms":0,
                               "groups":{"default":{"limit":1,"window_s":30}}})"));
  SimTestClient c(sim.start());
  QVERIFY(streamRequest(c, chatBody(4, true)).ended);
  const auto r = c.request("POST", "/v1/chat/completions", {}, chatBody(4, true));
  QCOMPARE(r.status, 429);
  QVERIFY2(r.header("content-type").rfind("application/json", 0) == 0, r.header("content-type").c_str());
  QCOMPARE(r.header("x-ratelimit-remaining-requests"), std::string("0"));
  QVERIFY(r.has("retry-after"));
  QCOMPARE(json::parse(r.body)["error"]["type"].get<std::string>(), std::string("rate_limit_exceeded"));
  const json s = sim.stats();
  QCOMPARE(s["totals"]["streams_started"].get<int>(), 1);
  QCOMPARE(s["totals"]["r429"].get<int>(), 1);
}

// HTTP/1.1 order: a request pipelined behind a stream is answered after the stream's last chunk.
void TestSimStream::pipelinedAfterStreamKeepsOrder() {
  SimServer sim(configFrom(R"({"dialect":"openai","stream_ttft_ms":50,"stream_chunk_interval_ms":30,
                               "stream_chunks":3})"));
  SimTestClient c(sim.start());
  QVERIFY(c.sendRaw(SimTestClient::format("POST", "/v1/chat/completions", {}, chatBody(6, false)) +
                    SimTestClient::format("POST", "/v1/embeddings", {}, R"({"max_tokens":2})")));
  QCOMPARE(c.readHead().status, 200);
  const std::string body = c.readChunkedBody().value_or("");
  QVERIFY(body.size() > 14 && body.compare(body.size() - 14, 14, "data: [DONE]\n\n") == 0);
  const auto second = c.readResponse();
  QCOMPARE(second.status, 200);
  QVERIFY2(json::parse(second.body).contains("usage"), second.body.c_str());
}

// HTTP/1.0 cannot take chunks: the stream is close-delimited.
void TestSimStream::http10IsCloseDelimited() {
  SimServer sim(configFrom(R"({"dialect":"openai","stream_ttft_ms":0,"stream_chunk_interval_ms":1})"));
  SimTestClient c(sim.start());
  const std::string body = chatBody(4, false);
  QVERIFY(c.sendRaw("POST /v1/chat/completions HTTP/1.0\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\n\r\n" + body));
  const auto head = c.readHead();
  QCOMPARE(head.status, 200);
  QVERIFY(!head.has("transfer-encoding"));
  QVERIFY(!head.has("content-length"));
  QCOMPARE(head.header("connection"), std::string("close"));
  const std::string rest = c.readToClose();
  QVERIFY2(rest.rfind("data: {", 0) == 0, rest.c_str());  // no chunk size lines
  QVERIFY2(rest.size() > 14 && rest.compare(rest.size() - 14, 14, "data: [DONE]\n\n") == 0, rest.c_str());
  QVERIFY(waitFor([&] { return sim.stats()["totals"]["streams_completed"].get<int>() == 1; }));
  QCOMPARE(sim.stats()["totals"]["streams_aborted"].get<int>(), 0);
}

void TestSimStream::requestsCountedPerPath() {
  SimServer sim(configFrom(R"({"dialect":"openai","stream_ttft_ms":0,"stream_chunk_interval_ms":0,
                               "groups":{"default":{"limit":2,"window_s":60}}})"));
  SimTestClient c(sim.start());
  QVERIFY(streamRequest(c, chatBody(2, false)).ended);
  QCOMPARE(c.request("POST", "/v1/chat/completions?x=1", {}, "{}").status, 200);
  QCOMPARE(c.request("POST", "/v1/chat/completions", {}, "{}").status, 429);  // received, though refused
  QCOMPARE(c.request("GET", "/v1/models").status, 429);
  QCOMPARE(c.request("GET", "/__sim/stats").status, 200);  // the simulator's own endpoints are not counted
  const json paths = sim.stats()["paths"];
  QCOMPARE(paths, json({{"/v1/chat/completions", 3}, {"/v1/models", 1}}));
  QCOMPARE(c.request("POST", "/__sim/reset").status, 200);
  QCOMPARE(sim.stats()["paths"], json::object());
}

QTEST_GUILESS_MAIN(TestSimStream)
#include "test_sim_stream.moc"
