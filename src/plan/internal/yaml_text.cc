#include "plan/internal/yaml_text.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace inferd::plan::internal {

bool NeedsQuotes(const std::string& s) {
  if (s.empty()) return true;
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const char* kWords[] = {"true", "false", "yes", "no",   "on",   "off",   "y",
                                 "n",    "null",  "~",   ".nan", ".inf", "-.inf", "+.inf"};
  for (const char* w : kWords) {
    if (lower == w) return true;
  }
  // Anything that starts like a number (YAML 1.1 also reads 1_000, 0x1f, 1:30).
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  if (digit(s[0])) return true;
  return (s[0] == '-' || s[0] == '+' || s[0] == '.') && s.size() > 1 &&
         (digit(s[1]) || s[1] == '.');
}

}  // namespace inferd::plan::internal
