#include "common/byte_size.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace inferd {

StatusOr<int64_t> ParseByteSize(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("memory size '" + std::string(text.substr(0, 40)) + "': " + why +
                           "; expected bytes or a number with K, M, G or T (1K = 1024), "
                           "e.g. 512M or 1.5G");
  };
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  const std::string number(text.substr(0, i));
  std::string suffix(text.substr(i));
  if (number.empty() || std::count(number.begin(), number.end(), '.') > 1 || number == ".") {
    return bad("no number");
  }
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() == 3 && suffix.substr(1) == "IB") suffix = suffix.substr(0, 1);
  if (suffix.size() == 2 && suffix[1] == 'B') suffix = suffix.substr(0, 1);
  int shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else if (suffix == "K") {
    shift = 10;
  } else if (suffix == "M") {
    shift = 20;
  } else if (suffix == "G") {
    shift = 30;
  } else if (suffix == "T") {
    shift = 40;
  } else {
    return bad("unknown suffix '" + std::string(text.substr(i, 8)) + "'");
  }
  const double value = std::strtod(number.c_str(), nullptr);
  const double bytes = std::ldexp(value, shift);
  if (!std::isfinite(bytes) || bytes >= 9.0e18) return bad("too large");
  if (shift == 0 && number.find('.') != std::string::npos) return bad("a fraction of a byte");
  return static_cast<int64_t>(std::llround(bytes));
}

std::string FormatBytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof(buf), "%lld B", static_cast<long long>(bytes));
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
  }
  return buf;
}

std::string FormatMiB(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

}  // namespace inferd
