// JsonWriter: a minimal streaming JSON writer for `inferd topology --json`.
// Commas and string escaping are handled; structure is the caller's duty
// (Key only inside objects, Begin/End balanced). Output is compact.
//
// Not thread-safe; writes to a stream the caller owns and keeps alive.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

namespace inferd::topology {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Double(double value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  JsonWriter& IntArray(const std::vector<int>& values);

 private:
  void BeforeValue();
  void WriteEscaped(std::string_view s);

  std::ostream& out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace inferd::topology
