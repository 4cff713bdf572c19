#include "http_request_parser.h"

#include <algorithm>
#include <charconv>

namespace tg {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool containsToken(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (iequals(trim(list.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// RFC 9110 5.6.2 tchar: what a method or a header name may contain.
bool isTokenChar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool isToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return isTokenChar(static_cast<unsigned char>(c)); });
}

// Field values: visible characters, SP, HTAB and obs-text; never CR, LF, NUL or other controls.
bool isFieldValue(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c == '\t' || (c >= 0x20 && c != 0x7f);
  });
}

// The offset of the first CR not followed by LF or LF not preceded by CR in `s`, or npos. A CR at the
// very end may still be followed by its LF in data not yet received.
std::size_t findBareLineEnd(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) return i;
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] != '\n') return i;
  }
  return std::string_view::npos;
}

HttpRequestParser::Outcome error(int status, std::string message) {
  HttpRequestParser::Outcome o;
  o.status = HttpRequestParser::Status::Error;
  o.errorStatus = status;
  o.errorMessage = std::move(message);
  return o;
}

}  // namespace

const std::string* HttpRequest::header(std::string_view lowerName) const {
  for (const auto& [k, v] : headers)
    if (k == lowerName) return &v;
  return nullptr;
}

std::string_view HttpRequest::path() const {
  std::string_view t = target;
  return t.substr(0, t.find('?'));
}

HttpRequestParser::Outcome HttpRequestParser::parse(std::string_view data, HttpRequest& out) {
  // Tolerate empty lines before a request (RFC 9112 2.2).
  std::size_t start = 0;
  while (start + 1 < data.size() && data[start] == '\r' && data[start + 1] == '\n') start += 2;
  const auto headEnd = data.find("\r\n\r\n", start);
  // Checked before waiting for more: a head that ends in bare LFs would otherwise never complete.
  const std::string_view scanned =
      data.substr(start, headEnd == std::string_view::npos ? std::string_view::npos : headEnd - start + 4);
  if (findBareLineEnd(scanned) != std::string_view::npos)
    return error(400, "bare CR or LF in the request head; lines must end with CRLF");
  if (headEnd == std::string_view::npos) {
    if (data.size() - start > kMaxHeaderBytes) return error(431, "request head larger than 64 KiB");
    return {};
  }
  if (headEnd - start > kMaxHeaderBytes) return error(431, "request head larger than 64 KiB");
  std::string_view head = data.substr(start, headEnd - start);

  const auto lineEnd = head.find("\r\n");
  std::string_view line = head.substr(0, lineEnd);
  head = lineEnd == std::string_view::npos ? std::string_view{} : head.substr(lineEnd + 2);
  const auto sp1 = line.find(' ');
  const auto sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1 || sp1 == 0) return error(400, "malformed request line");
  const std::string_view version = line.substr(sp2 + 1);
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[5] < '0' || version[5] > '9' ||
      version[6] != '.' || version[7] < '0' || version[7] > '9')
    return error(400, "malformed HTTP version in the request line");
  if (version[5] != '1') return error(505, "only HTTP/1.x is supported");
  out = HttpRequest{};
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (!isToken(method)) return error(400, "malformed request method");
  if (target.empty()) return error(400, "empty request target");
  if (!isFieldValue(target) || target.find_first_of(" \t") != std::string_view::npos)
    return error(400, "malformed request target");
  out.method.assign(method);
  out.target.assign(target);
  out.versionMinor = version[7] == '0' ? 0 : 1;

  bool chunked = false, haveLength = false, expectContinue = false;
  std::size_t length = 0;
  while (!head.empty()) {
    const auto e = head.find("\r\n");
    std::string_view h = head.substr(0, e);
    head = e == std::string_view::npos ? std::string_view{} : head.substr(e + 2);
    if (h.empty()) continue;
    if (h.front() == ' ' || h.front() == '\t') return error(400, "obsolete header line folding");
    const auto colon = h.find(':');
    if (colon == std::string_view::npos || colon == 0) return error(400, "malformed header line");
    std::string name(h.substr(0, colon));
    if (name.back() == ' ' || name.back() == '\t') return error(400, "whitespace before a header colon");
    if (!isToken(name)) return error(400, "invalid character in a header name");
    if (!isFieldValue(h.substr(colon + 1))) return error(400, "control character in header " + name);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? char(c | 0x20) : c; });
    const std::string_view value = trim(h.substr(colon + 1));
    if (name == "content-length") {
      std::size_t n = 0;
      const auto r = std::from_chars(value.data(), value.data() + value.size(), n);
      if (r.ec != std::errc{} || r.ptr != value.data() + value.size()) return error(400, "bad Content-Length");
      if (haveLength && n != length) return error(400, "conflicting Content-Length headers");
      haveLength = true;
      length = n;
    } else if (name == "transfer-encoding") {
      chunked = true;
    } else if (name == "expect") {
      expectContinue = iequals(value, "100-continue");
    }
    out.headers.emplace_back(std::move(name), std::string(value));
  }
  if (chunked) return error(411, "chunked request bodies are not supported; send Content-Length");
  if (length > kMaxBodyBytes) return error(413, "request body larger than 16 MiB");
  const std::string* c = out.header("connection");
  const std::string_view connection = c ? std::string_view(*c) : std::string_view{};
  out.keepAlive = out.versionMinor == 1 ? !containsToken(connection, "close")
                                        : containsToken(connection, "keep-alive");

  const std::size_t bodyStart = headEnd + 4;
  if (data.size() - bodyStart < length) {
    Outcome o;
    o.expectContinue = expectContinue;
    return o;
  }
  out.body.assign(data.substr(bodyStart, length));
  Outcome o;
  o.status = Status::Complete;
  o.consumed = bodyStart + length;
  return o;
}

}  // namespace tg
