// Helpers for the pipeline tests: the committed fixtures under
// tests/fixtures/pipeline (made by tools/pipeline_reference.py fixtures).
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace inferd::pipeline::testing {

inline std::string FixtureDir() {
  std::string here = __FILE__;  // .../tests/unit/pipeline/fixtures.h
  return here.substr(0, here.rfind("/unit/")) + "/fixtures/pipeline";
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string Fixture(const std::string& name) { return ReadFile(FixtureDir() + "/" + name); }

inline std::vector<float> FixtureFloats(const std::string& name) {
  std::string bytes = Fixture(name);
  std::vector<float> out(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(out.size() * sizeof(float)),
            reinterpret_cast<char*>(out.data()));
  return out;
}

inline void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Undoes Python's "unicode_escape" encoding (how the text fixtures are stored).
inline std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out.push_back(s[i]);
      continue;
    }
    char e = s[++i];
    int hex = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
    if (hex) {
      AppendUtf8(static_cast<uint32_t>(std::stoul(s.substr(i + 1, hex), nullptr, 16)), &out);
      i += hex;
    } else {
      out.push_back(e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e);
    }
  }
  return out;
}

}  // namespace inferd::pipeline::testing
