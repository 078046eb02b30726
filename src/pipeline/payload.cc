#include "pipeline/payload.h"

#include <simdjson.h>

#include <array>
#include <cctype>
#include <optional>

namespace inferd::pipeline {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Value of `key=` among ";"-separated parameters, unquoted; "" when absent.
std::string Parameter(std::string_view header, std::string_view key) {
  size_t pos = 0;
  while ((pos = header.find(';', pos)) != std::string_view::npos) {
    std::string_view rest = Trim(header.substr(++pos));
    size_t eq = rest.find('=');
    if (eq == std::string_view::npos) continue;
    if (Lower(Trim(rest.substr(0, eq))) != key) continue;
    std::string_view v = Trim(rest.substr(eq + 1));
    if (!v.empty() && v.front() == '"') {
      size_t end = v.find('"', 1);
      return std::string(v.substr(1, end == std::string_view::npos ? v.npos : end - 1));
    }
    return std::string(v.substr(0, v.find(';')));
  }
  return "";
}

struct Part {
  std::string name, filename, content_type;
  std::string_view body;
};

StatusOr<Payload> UnwrapMultipart(std::string_view content_type, std::string_view body) {
  const std::string boundary = Parameter(content_type, "boundary");
  if (boundary.empty())
    return InvalidArgument("multipart/form-data body without a boundary parameter");
  const std::string delimiter = "--" + boundary;
  size_t pos = body.find(delimiter);
  if (pos == std::string_view::npos) return InvalidArgument("multipart body: boundary not found");
  std::optional<Part> chosen;
  int rank = 3;  // 0: name "data"; 1: first file; 2: first part
  while (true) {
    pos += delimiter.size();
    if (body.substr(pos, 2) == "--") break;  // closing delimiter
    size_t headers_start = body.find("\r\n", pos);
    if (headers_start == std::string_view::npos)
      return InvalidArgument("multipart body is truncated");
    headers_start += 2;
    size_t headers_end = body.find("\r\n\r\n", headers_start - 2);  // a part may have no headers
    size_t next = headers_end == std::string_view::npos
                      ? headers_end
                      : body.find("\r\n" + delimiter, headers_end + 4);
    if (next == std::string_view::npos) return InvalidArgument("multipart body is truncated");
    Part part;
    part.body = body.substr(headers_end + 4, next - headers_end - 4);
    std::string_view headers = headers_end > headers_start
                                   ? body.substr(headers_start, headers_end - headers_start)
                                   : std::string_view();
    while (!headers.empty()) {
      size_t eol = headers.find("\r\n");
      std::string_view line = headers.substr(0, eol);
      headers = eol == std::string_view::npos ? std::string_view() : headers.substr(eol + 2);
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      std::string key = Lower(Trim(line.substr(0, colon)));
      std::string_view value = Trim(line.substr(colon + 1));
      if (key == "content-disposition") {
        part.name = Parameter(value, "name");
        part.filename = Parameter(value, "filename");
      } else if (key == "content-type") {
        part.content_type = std::string(value);
      }
    }
    int r = part.name == "data" ? 0 : !part.filename.empty() ? 1 : 2;
    if (r < rank) {
      rank = r;
      chosen = part;
    }
    pos = next + 2;
  }
  if (!chosen) return InvalidArgument("multipart body has no parts");
  return Payload{MediaType(chosen->content_type), chosen->body};
}

StatusOr<Payload> UnwrapJson(std::string_view body, std::string* storage) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto error = parser.parse(body.data(), body.size()).get(doc)) {
    return InvalidArgument(std::string("JSON body: ") + simdjson::error_message(error));
  }
  simdjson::dom::object object;
  if (doc.get(object))
    return InvalidArgument("JSON body: expected an object with \"b64\" or \"text\"");
  std::string_view value;
  for (const char* key : {"b64", "data"}) {
    if (!object[key].get(value)) {
      ASSIGN_OR_RETURN(*storage, DecodeBase64(value));
      return Payload{"", *storage};
    }
  }
  if (!object["text"].get(value)) {
    *storage = std::string(value);
    return Payload{"text/plain", *storage};
  }
  return InvalidArgument("JSON body: expected a string member \"b64\" (base64 data) or \"text\"");
}

}  // namespace

std::string MediaType(std::string_view content_type) {
  return Lower(Trim(content_type.substr(0, content_type.find(';'))));
}

StatusOr<std::string> DecodeBase64(std::string_view text) {
  static const std::array<int8_t, 256> table = [] {
    std::array<int8_t, 256> t;
    t.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i)
      t[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
    t['-'] = 62;
    t['_'] = 63;
    return t;
  }();
  std::string out;
  out.reserve(text.size() / 4 * 3 + 3);
  uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    if (padding || table[c] < 0) return InvalidArgument("invalid base64 data");
    acc = (acc << 6) | static_cast<uint32_t>(table[c]);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  if (bits >= 6) return InvalidArgument("invalid base64 data (truncated)");
  return out;
}

StatusOr<Payload> UnwrapPayload(const scheduler::RawInput& raw, std::string* storage) {
  std::string media = MediaType(raw.content_type);
  if (media == "multipart/form-data") return UnwrapMultipart(raw.content_type, raw.bytes);
  if (media == "application/json") return UnwrapJson(raw.bytes, storage);
  return Payload{media, raw.bytes};
}

}  // namespace inferd::pipeline
