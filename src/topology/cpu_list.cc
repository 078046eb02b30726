#include "topology/cpu_list.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iterator>

namespace inferd::topology {
namespace {

constexpr int kMaxCpuId = 1 << 16;  // far above any machine; catches garbage

bool ParseId(std::string_view s, int* out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size() && *out >= 0 && *out < kMaxCpuId;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

StatusOr<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  text = Trim(text);
  if (text.empty()) return cpus;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view part = Trim(text.substr(start, comma - start));
    auto bad = [&] {
      return InvalidArgument("cpu list '" + std::string(text) + "': '" + std::string(part) +
                             "' is not a cpu id or range like 0-3");
    };
    size_t dash = part.find('-');
    int lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (!ParseId(part, &lo)) return bad();
      hi = lo;
    } else {
      if (!ParseId(Trim(part.substr(0, dash)), &lo) || !ParseId(Trim(part.substr(dash + 1)), &hi) ||
          hi < lo) {
        return bad();
      }
    }
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    start = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> IntersectCpus(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace inferd::topology
