#include "http_response_writer.h"

#include "time_text.h"

#include <cstdio>

namespace tg {
namespace {

const char* reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return status < 500 ? "Client Error" : "Server Error";
  }
}

void endHead(std::string& out, const HeaderList& headers, bool close) {
  out += close ? "\r\nConnection: close\r\n" : "\r\n";
  for (const auto& [k, v] : headers) {
    out += k;
    out += ": ";
    out += v;
    out += "\r\n";
  }
  out += "\r\n";
}

}  // namespace

void HttpResponseWriter::head(std::string& out, int status, double wallNowS) {
  const auto sec = static_cast<std::int64_t>(wallNowS);
  if (sec != dateSecond_) {
    dateSecond_ = sec;
    dateHeader_ = formatUtc(sec * 1000, UtcStyle::HttpDate);
  }
  out += "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  out += reason(status);
  out += "\r\nServer: tollgate-sim\r\nDate: ";
  out += dateHeader_;
}

std::string HttpResponseWriter::serialize(int status, const HeaderList& headers, const std::string& body, bool close,
                                          double wallNowS) {
  std::string out;
  out.reserve(256 + body.size() + headers.size() * 48);
  head(out, status, wallNowS);
  out += "\r\nContent-Type: application/json\r\nContent-Length: ";
  out += std::to_string(body.size());
  endHead(out, headers, close);
  out += body;
  return out;
}

std::string HttpResponseWriter::serializeStreamHead(int status, const HeaderList& headers, bool chunked, bool close,
                                                    double wallNowS) {
  std::string out;
  out.reserve(256 + headers.size() * 48);
  head(out, status, wallNowS);
  out += "\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache";
  if (chunked) out += "\r\nTransfer-Encoding: chunked";
  endHead(out, headers, close || !chunked);
  return out;
}

std::string HttpResponseWriter::chunk(std::string_view data) {
  if (data.empty()) return {};
  char size[20];
  const int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out;
  out.reserve(static_cast<std::size_t>(n) + data.size() + 2);
  out.append(size, static_cast<std::size_t>(n));
  out += data;
  out += "\r\n";
  return out;
}

}  // namespace tg
