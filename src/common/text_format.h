// Small pieces of text for messages and reports. Pure functions.
#pragma once

#include <cstdio>
#include <string>

namespace inferd {

// A number with a fixed count of decimals: (2.345, 1) -> "2.3".
inline std::string FormatFixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// A name as messages quote it: x -> 'x'.
inline std::string Quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace inferd
