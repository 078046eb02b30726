#include "repository/model_name.h"

#include <cstdint>
#include <cstdio>

namespace inferd::repository {
namespace {

// Length of the UTF-8 sequence starting at text[i] (its code point in *cp), or
// 0 when it is not a valid, shortest-form encoding of a scalar value (RFC 3629).
size_t Utf8SequenceLength(std::string_view text, size_t i, uint32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b0 = byte(i);
  *code_point = b0;
  if (b0 < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    cp = b0 & 0x0Fu;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    cp = b0 & 0x07u;
  } else {
    return 0;  // a continuation byte first, 0xC0/0xC1 (overlong) or past U+10FFFF
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3Fu);
  }
  const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n]) return 0;                // overlong
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;  // UTF-16 surrogate
  if (cp > 0x10FFFF) return 0;
  *code_point = cp;
  return n;
}

}  // namespace

std::string EscapeForMessage(std::string_view text, size_t max_bytes) {
  std::string out;
  const size_t n = text.size() < max_bytes ? text.size() : max_bytes;
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      out += buf;
    }
  }
  if (n < text.size()) out += "...";
  return out;
}

Status ValidateModelName(std::string_view name) {
  auto refuse = [&](const std::string& why) {
    return InvalidArgument("'" + EscapeForMessage(name) + "' is not a valid model name: " + why);
  };
  if (name.empty()) return InvalidArgument("the model name is empty");
  if (name.size() > kMaxModelNameBytes) {
    return refuse(std::to_string(name.size()) +
                  " bytes long; a model name (a folder of the "
                  "model store) is at most " +
                  std::to_string(kMaxModelNameBytes) + " bytes");
  }
  if (name == "." || name == "..") return refuse("'.' and '..' are not folders of the store");
  for (size_t i = 0; i < name.size();) {
    uint32_t c = 0;
    const size_t n = Utf8SequenceLength(name, i, &c);
    if (n == 0) return refuse("not valid UTF-8 (at byte " + std::to_string(i) + ")");
    if (c == '/' || c == '\\') {
      return refuse("it holds a path separator; a model name is one folder of the model store");
    }
    if (c == 0) return refuse("it holds a NUL byte");
    if (c < 0x20 || (c >= 0x7F && c <= 0x9F)) return refuse("it holds a control character");
    i += n;
  }
  return Status::Ok();
}

}  // namespace inferd::repository
