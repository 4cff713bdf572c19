#include "sim_stream_builder.h"

#include "http_response_writer.h"
#include "json_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace tg {
namespace {

using nlohmann::json;

// A content piece carries at most this many words: the token count is what the usage reports, the text
// only has to look like tokens arriving (a max_tokens of a million must not make a megabyte of events).
constexpr std::int64_t kMaxWordsPerChunk = 64;
constexpr const char* kWord = " tok";

std::string dataEvent(const json& j) { return "data: " + dumpJson(j) + "\n\n"; }

std::string namedEvent(const char* name, const json& j) {
  return std::string("event: ") + name + "\ndata: " + dumpJson(j) + "\n\n";
}

// Piece i of `chunks` pieces of `tokens` words, the remainder spread over the first pieces.
std::string pieceText(std::int64_t tokens, int chunks, int i) {
  const std::int64_t words = tokens / chunks + (i < tokens % chunks ? 1 : 0);
  std::string text;
  for (std::int64_t w = 0; w < std::min(words, kMaxWordsPerChunk); ++w) text += kWord;
  return text;
}

// One OpenAI chat.completion.chunk with a single choice. With include_usage every chunk but the usage one
// carries "usage": null, as OpenAI's do.
json openAiChunk(const SimStreamRequest& r, json delta, json finishReason) {
  json j = {{"id", r.id},
            {"object", "chat.completion.chunk"},
            {"created", r.createdS},
            {"model", r.model},
            {"choices",
             json::array({{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finishReason)}}})}};
  if (r.includeUsage) j["usage"] = nullptr;
  return j;
}

std::vector<std::string> openAiEvents(const SimStreamRequest& r, int chunks, std::string& opening,
                                      std::string& closing) {
  opening = dataEvent(openAiChunk(r, {{"role", "assistant"}, {"content", ""}}, nullptr));
  std::vector<std::string> pieces;
  for (int i = 0; i < chunks; ++i)
    pieces.push_back(dataEvent(openAiChunk(r, {{"content", pieceText(r.completionTokens, chunks, i)}}, nullptr)));
  closing = dataEvent(openAiChunk(r, json::object(), "stop"));
  if (r.includeUsage) {
    json usage = openAiChunk(r, json::object(), nullptr);
    usage["choices"] = json::array();
    usage["usage"] = {{"prompt_tokens", r.promptTokens},
                      {"completion_tokens", r.completionTokens},
                      {"total_tokens", r.promptTokens + r.completionTokens}};
    closing += dataEvent(usage);
  }
  closing += "data: [DONE]\n\n";
  return pieces;
}

// Anthropic's Messages stream: message_start (input tokens), a text block with a ping after its start, the
// text deltas, the block's stop, message_delta with the output tokens, message_stop.
std::vector<std::string> anthropicEvents(const SimStreamRequest& r, int chunks, std::string& opening,
                                         std::string& closing) {
  const json message = {{"id", r.id},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"content", json::array()},
                        {"model", r.model},
                        {"stop_reason", nullptr},
                        {"stop_sequence", nullptr},
                        {"usage", {{"input_tokens", r.promptTokens}, {"output_tokens", 1}}}};
  opening = namedEvent("message_start", {{"type", "message_start"}, {"message", message}}) +
            namedEvent("content_block_start", {{"type", "content_block_start"},
                                               {"index", 0},
                                               {"content_block", {{"type", "text"}, {"text", ""}}}}) +
            namedEvent("ping", {{"type", "ping"}});
  std::vector<std::string> pieces;
  for (int i = 0; i < chunks; ++i)
    pieces.push_back(namedEvent(
        "content_block_delta",
        {{"type", "content_block_delta"},
         {"index", 0},
         {"delta", {{"type", "text_delta"}, {"text", pieceText(r.completionTokens, chunks, i)}}}}));
  closing = namedEvent("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}) +
            namedEvent("message_delta", {{"type", "message_delta"},
                                         {"delta", {{"stop_reason", "end_turn"}, {"stop_sequence", nullptr}}},
                                         {"usage", {{"output_tokens", r.completionTokens}}}}) +
            namedEvent("message_stop", {{"type", "message_stop"}});
  return pieces;
}

}  // namespace

int SimStreamBuilder::chunkCount(std::int64_t completionTokens, const SimStreamConfig& stream) {
  if (stream.chunks > 0) return stream.chunks;
  return static_cast<int>(std::clamp<std::int64_t>(completionTokens, 1, kMaxDerivedChunks));
}

std::vector<SimStreamStep> SimStreamBuilder::build(const SimStreamRequest& req, const SimStreamConfig& stream) {
  const int chunks = chunkCount(req.completionTokens, stream);
  std::string opening, closing;
  std::vector<std::string> pieces = req.dialect == SimDialect::Anthropic
                                        ? anthropicEvents(req, chunks, opening, closing)
                                        : openAiEvents(req, chunks, opening, closing);
  pieces.front().insert(0, opening);
  pieces.back() += closing;
  std::vector<SimStreamStep> steps;
  steps.reserve(pieces.size());
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    SimStreamStep s;
    s.atS = (stream.ttftMs + static_cast<double>(i) * stream.chunkIntervalMs) / 1000;
    s.bytes = req.chunked ? HttpResponseWriter::chunk(pieces[i]) : std::move(pieces[i]);
    steps.push_back(std::move(s));
  }
  if (req.chunked) steps.back().bytes += HttpResponseWriter::kLastChunk;
  return steps;
}

}  // namespace tg
