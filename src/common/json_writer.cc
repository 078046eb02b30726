#include "common/json_writer.h"

#include <charconv>
#include <cmath>

namespace inferd {
namespace {

template <typename T>
void AppendFloating(std::string& out, T value) {
  if (std::isnan(value)) {
    out += "\"NaN\"";
  } else if (std::isinf(value)) {
    out += value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else {
    // The shortest form writes 2^65 as 36893488147419103232: valid JSON, but
    // an integer past 64 bits, which simdjson and other parsers refuse (and
    // Python reads as an int). From 1e16 on, as Python's repr does, it is
    // written with an exponent (3.6893488147419103e+19), still the shortest
    // digits that read back as the same value.
    char buf[40];
    auto [end, ec] = std::fabs(value) >= static_cast<T>(1e16)
                         ? std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific)
                         : std::to_chars(buf, buf + sizeof(buf), value);
    out.append(buf, ec == std::errc() ? end : buf);
  }
}

// Length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629:
// no overlong forms, no surrogates, nothing past U+10FFFF); 0 if it is not one.
size_t Utf8SequenceLength(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) > 0x9F) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) > 0x8F) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    const unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out += kHex[u >> 4];
          out += kHex[u & 0xf];
        } else if (u < 0x80) {
          out += c;
        } else {
          // JSON text is UTF-8: a valid sequence is copied, any other byte
          // becomes U+FFFD, so that text taken from a client (a path, a
          // model name) can never make the answer unparseable.
          const size_t n = Utf8SequenceLength(value.substr(i));
          if (n == 0) {
            out += "\xEF\xBF\xBD";
          } else {
            out.append(value.data() + i, n);
            i += n - 1;
          }
        }
    }
  }
  out += '"';
}

void AppendJsonFloat(std::string& out, float value) { AppendFloating(out, value); }
void AppendJsonDouble(std::string& out, double value) { AppendFloating(out, value); }
void AppendJsonInt(std::string& out, int64_t value) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, end);
}

std::string& JsonWriter::BeginRawValue() {
  BeforeValue();
  return out_;
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_items_.empty()) {
    if (has_items_.back()) out_ += ',';
    has_items_.back() = true;
  }
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  has_items_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  out_ += '}';
  has_items_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  has_items_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  out_ += ']';
  has_items_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendJsonString(out_, key);
  out_ += ':';
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendJsonString(out_, value);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  BeforeValue();
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  out_.append(buf, end);
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  out_.append(buf, end);
  return *this;
}

JsonWriter& JsonWriter::Double(double value) {
  BeforeValue();
  AppendFloating(out_, value);
  return *this;
}

JsonWriter& JsonWriter::Float(float value) {
  BeforeValue();
  AppendFloating(out_, value);
  return *this;
}

JsonWriter& JsonWriter::IntArray(const std::vector<int>& values) {
  BeginArray();
  for (int v : values) Int(v);
  return EndArray();
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

}  // namespace inferd
