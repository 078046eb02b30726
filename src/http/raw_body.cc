#include "http/raw_body.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "http/json_body.h"

namespace inferd::http {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && Lower(s.substr(0, prefix.size())) == prefix;
}

struct Part {
  std::string name;
  std::optional<std::string> filename;
  std::string content_type;
  std::string_view body;
};

}  // namespace

std::string HeaderParam(std::string_view header, std::string_view param) {
  size_t at = 0;
  while ((at = header.find(';', at)) != std::string_view::npos) {
    ++at;
    std::string_view rest = Trim(header.substr(at));
    size_t eq = rest.find('=');
    if (eq == std::string_view::npos) continue;
    if (Lower(Trim(rest.substr(0, eq))) != param) continue;
    std::string_view value = rest.substr(eq + 1);
    if (!value.empty() && value.front() == '"') {
      size_t close = value.find('"', 1);
      return std::string(
          value.substr(1, close == std::string_view::npos ? value.size() - 1 : close - 1));
    }
    size_t end = value.find(';');
    return std::string(Trim(value.substr(0, end)));
  }
  return "";
}

std::optional<std::string> DecodeBase64(std::string_view text) {
  static const std::array<int8_t, 256> table = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i)
      t[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
    return t;
  }();
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    int8_t v = table[static_cast<unsigned char>(c)];
    if (v < 0 || padding) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  if (bits >= 6) return std::nullopt;  // a lone trailing character
  return out;
}

StatusOr<scheduler::RawInput> ExtractMultipartPart(std::string_view body,
                                                   std::string_view content_type) {
  std::string boundary = HeaderParam(content_type, "boundary");
  if (boundary.empty()) {
    return InvalidArgument("multipart/form-data body without a boundary parameter in Content-Type");
  }
  std::string delimiter = "--" + boundary;
  std::vector<Part> parts;
  size_t at = body.find(delimiter);
  while (at != std::string_view::npos) {
    at += delimiter.size();
    if (body.substr(at, 2) == "--") break;  // closing delimiter
    size_t headers_end = body.find("\r\n\r\n", at);
    if (headers_end == std::string_view::npos) break;
    Part part;
    std::string_view headers = body.substr(at, headers_end - at);
    size_t line_start = 0;
    while (line_start < headers.size()) {
      size_t line_end = headers.find("\r\n", line_start);
      if (line_end == std::string_view::npos) line_end = headers.size();
      std::string_view line = headers.substr(line_start, line_end - line_start);
      line_start = line_end + 2;
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      std::string key = Lower(Trim(line.substr(0, colon)));
      std::string_view value = Trim(line.substr(colon + 1));
      if (key == "content-disposition") {
        part.name = HeaderParam(value, "name");
        if (value.find("filename") != std::string_view::npos) {
          part.filename = HeaderParam(value, "filename");
        }
      } else if (key == "content-type") {
        part.content_type = std::string(value);
      }
    }
    size_t data_start = headers_end + 4;
    size_t next = body.find("\r\n" + delimiter, data_start);
    if (next == std::string_view::npos) {
      return InvalidArgument("multipart/form-data body: part '" + part.name +
                             "' has no closing boundary");
    }
    part.body = body.substr(data_start, next - data_start);
    parts.push_back(std::move(part));
    at = next + 2;
  }
  if (parts.empty()) return InvalidArgument("multipart/form-data body holds no parts");
  const Part* chosen = nullptr;
  for (const auto& p : parts)
    if (!chosen && p.name == "data") chosen = &p;
  for (const auto& p : parts)
    if (!chosen && p.filename) chosen = &p;
  if (!chosen) chosen = &parts.front();
  return scheduler::RawInput{chosen->content_type, std::string(chosen->body)};
}

StatusOr<scheduler::RawInput> ExtractRawInput(const HttpRequest& request) {
  std::string_view type = request.content_type;
  if (StartsWith(type, "multipart/form-data")) {
    return ExtractMultipartPart(*request.body, type);
  }
  if (StartsWith(type, "application/json")) {
    ReservePadding(*request.body);
    ASSIGN_OR_RETURN(JsonDocument doc, ParseJsonBody(*request.body));
    simdjson::dom::element root = doc.root();
    simdjson::dom::object obj;
    std::string_view value;
    if (root.get_object().get(obj) == simdjson::SUCCESS) {
      if (obj["b64"].get(value) == simdjson::SUCCESS) {
        auto decoded = DecodeBase64(value);
        if (!decoded) return InvalidArgument("'b64': not valid base64");
        return scheduler::RawInput{"", std::move(*decoded)};
      }
      for (const char* key : {"data", "text"}) {
        if (obj[key].get(value) == simdjson::SUCCESS) {
          return scheduler::RawInput{"text/plain", std::string(value)};
        }
      }
    }
    return InvalidArgument(
        "a JSON body for a model with preprocessing must be {\"b64\": "
        "\"<base64>\"}, {\"data\": \"<text>\"} or {\"text\": \"<text>\"}; send "
        "raw bytes (an image) with their own Content-Type instead");
  }
  if (request.body->empty()) return InvalidArgument("the request body is empty");
  return scheduler::RawInput{std::string(type), std::move(*request.body)};
}

}  // namespace inferd::http
