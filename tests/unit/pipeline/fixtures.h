// Helpers for the pipeline tests: the committed fixtures under
// tests/fixtures/pipeline (made by tools/pipeline_reference.py fixtures).
#pragma once

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

}  // namespace inferd::pipeline::testing
