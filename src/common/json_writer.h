// JsonWriter: builds compact JSON text into a string, one call per token; the
// one JSON writer of the project (HTTP answers, `topology --json`, bench reports).
//
// Numbers are written exactly: integers in full, floats and doubles as the
// shortest text that reads back to the same value (std::to_chars), so an FP32
// output survives a JSON roundtrip bit for bit. NaN and infinities, which JSON
// numbers cannot hold, are written as the strings "NaN", "Infinity" and
// "-Infinity": the text stays valid JSON for every parser (Python's bare NaN
// is not JSON), loses nothing, and the v2/TorchServe decoders accept the same
// strings for floating-point inputs, so an output can be sent back as an input.
// Commas and colons are inserted by the writer. Not thread-safe; cheap to create.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace inferd {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Uint(uint64_t value);
  JsonWriter& Double(double value);
  JsonWriter& Float(float value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  JsonWriter& IntArray(const std::vector<int>& values);
  // For bulk writers (tensor data): the buffer to append exactly one complete
  // JSON value to, after the writer has placed any comma it needs.
  std::string& BeginRawValue();

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }
  void Reserve(size_t n) { out_.reserve(n); }

 private:
  void BeforeValue();

  std::string out_;
  std::vector<bool> has_items_;  // per open container: a comma is due before the next item
  bool after_key_ = false;
};

// Appends `value` as a quoted, escaped JSON string; bytes that are not
// well-formed UTF-8 are written as U+FFFD (JSON text must be UTF-8).
void AppendJsonString(std::string& out, std::string_view value);
// Append numbers exactly as JsonWriter writes them.
void AppendJsonFloat(std::string& out, float value);
void AppendJsonDouble(std::string& out, double value);
void AppendJsonInt(std::string& out, int64_t value);

}  // namespace inferd
