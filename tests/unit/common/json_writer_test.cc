#include "common/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

namespace inferd {
namespace {

TEST(JsonWriter, IntArraysAndControlCharacters) {
  JsonWriter w;
  w.BeginObject().Key("a").Int(1).Key("s").String("q\"\\\n\x01").Key("l").IntArray({1, 2});
  w.Key("o").BeginObject().Key("d").Double(2.5).Key("n").Null().Key("b").Bool(true).EndObject();
  w.EndObject();
  EXPECT_EQ(w.str(), R"({"a":1,"s":"q\"\\\n\u0001","l":[1,2],"o":{"d":2.5,"n":null,"b":true}})");
}

TEST(JsonWriter, InsertsCommasAndColons) {
  JsonWriter w;
  w.BeginObject();
  w.Key("a").Int(1);
  w.Key("b").BeginArray().Int(1).Bool(true).Null().String("x").EndArray();
  w.Key("c").BeginObject().EndObject();
  w.Key("d").BeginArray().BeginArray().EndArray().BeginArray().Int(2).EndArray().EndArray();
  w.EndObject();
  EXPECT_EQ(w.str(), R"({"a":1,"b":[1,true,null,"x"],"c":{},"d":[[],[2]]})");
}

TEST(JsonWriter, EscapesStrings) {
  JsonWriter w;
  w.String(std::string("q\"b\\n\nt\tc\x01", 10));
  EXPECT_EQ(w.str(), R"("q\"b\\n\nt\tc\u0001")");
}

TEST(JsonWriter, WritesIntegersInFull) {
  JsonWriter w;
  w.BeginArray()
      .Int(std::numeric_limits<int64_t>::min())
      .Uint(std::numeric_limits<uint64_t>::max())
      .EndArray();
  EXPECT_EQ(w.str(), "[-9223372036854775808,18446744073709551615]");
}

TEST(JsonWriter, FloatsRoundtripBitForBit) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1e6f, 1e6f);
  for (int i = 0; i < 1000; ++i) {
    float f = dist(rng) * std::pow(10.0f, static_cast<float>(i % 20 - 10));
    JsonWriter w;
    w.Float(f);
    float back = std::strtof(w.str().c_str(), nullptr);
    ASSERT_EQ(std::memcmp(&f, &back, 4), 0) << w.str();
  }
  JsonWriter w;
  w.Float(0.1f);
  EXPECT_EQ(w.str(), "0.1");  // shortest, not 0.100000001
}

TEST(JsonWriter, DoublesRoundtrip) {
  double d = 0.1 + 0.2;
  JsonWriter w;
  w.Double(d);
  EXPECT_EQ(std::strtod(w.str().c_str(), nullptr), d);
}

// Found by the v2_binary and torchserve_json fuzz targets: an FP64 output of
// 2^65 was written as 36893488147419103232, an integer past 64 bits that
// simdjson refuses to parse. Large values take an exponent, as in Python.
TEST(JsonWriter, LargeFloatingValuesAreNotWrittenAsHugeIntegers) {
  const double d = std::ldexp(1.0, 65);
  JsonWriter w;
  w.BeginArray().Double(d).Double(-d).Float(1.8446744e20f).Double(1e15).Double(123.0).EndArray();
  EXPECT_EQ(w.str(), "[3.6893488147419103e+19,-3.6893488147419103e+19,1.8446744e+20,"
                     "1e+15,123]");
  EXPECT_EQ(std::strtod(w.str().c_str() + 1, nullptr), d);
  for (double v : {1e16, 9.999999999999998e15, 1.7976931348623157e308, 5e-324}) {
    JsonWriter one;
    one.Double(v);
    EXPECT_EQ(std::strtod(one.str().c_str(), nullptr), v) << one.str();
    EXPECT_TRUE(one.str().find_first_of(".e") != std::string::npos || std::fabs(v) < 1e16)
        << one.str();
  }
}

// Bare NaN (what Python's json writes) is not JSON: the values go as strings.
TEST(JsonWriter, NonFiniteAsStrings) {
  JsonWriter w;
  w.BeginArray()
      .Float(std::numeric_limits<float>::quiet_NaN())
      .Double(std::numeric_limits<double>::infinity())
      .Float(-std::numeric_limits<float>::infinity())
      .EndArray();
  EXPECT_EQ(w.str(), R"(["NaN","Infinity","-Infinity"])");
}


}  // namespace
}  // namespace inferd
