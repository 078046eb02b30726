#include "metrics/process_metrics.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

namespace inferd::metrics {
namespace {

// The value of one series in Prometheus text, or -1 when absent.
double Value(const std::string& text, const std::string& series) {
  const std::regex line("(^|\n)" + std::regex_replace(series, std::regex(R"([{}"])"), R"(\$&)") +
                        " ([^\n]+)");
  std::smatch m;
  if (!std::regex_search(text, m, line)) return -1;
  return std::strtod(m[2].str().c_str(), nullptr);
}

TEST(ProcessStat, ParsesFieldsAfterACommandWithSpacesAndParentheses) {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt
  // cmajflt utime stime cutime cstime priority nice threads itrealvalue
  // starttime vsize rss ...
  const std::string text =
      "4242 (inferd (exec) 1) S 1 4242 4242 0 -1 4194560 1234 0 56 0 700 300 0 0 20 0 9 0 "
      "98765 1073741824 25600 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0\n";
  auto s = ParseProcessStat(text);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->minor_faults, 1234u);
  EXPECT_EQ(s->major_faults, 56u);
  EXPECT_EQ(s->utime_ticks, 700u);
  EXPECT_EQ(s->stime_ticks, 300u);
  EXPECT_EQ(s->start_ticks, 98765u);
  EXPECT_EQ(s->vsize_bytes, 1073741824u);
  EXPECT_EQ(s->rss_pages, 25600u);
  EXPECT_FALSE(ParseProcessStat("4242 (x) S 1 2").has_value());
  EXPECT_FALSE(ParseProcessStat("no parenthesis").has_value());
}

TEST(CpuStat, ParsesV2AndV1) {
  auto v2 = ParseCpuStat(
      "usage_usec 100\nuser_usec 60\nsystem_usec 40\nnr_periods 50\nnr_throttled 7\n"
      "throttled_usec 250000\n");
  ASSERT_TRUE(v2.has_value());
  EXPECT_EQ(v2->periods, 50u);
  EXPECT_EQ(v2->throttled_periods, 7u);
  EXPECT_DOUBLE_EQ(v2->throttled_seconds, 0.25);
  auto v1 = ParseCpuStat("nr_periods 10\nnr_throttled 2\nthrottled_time 1500000000\n");
  ASSERT_TRUE(v1.has_value());
  EXPECT_DOUBLE_EQ(v1->throttled_seconds, 1.5);
  // cpu.stat without the cpu controller (v2 usage only): no throttling figures.
  EXPECT_FALSE(ParseCpuStat("usage_usec 100\nuser_usec 60\n").has_value());
}

TEST(ProcessMetrics, ExportsThisProcessAndCountsItsFaults) {
  Registry r;
  ExportProcessMetrics(r);
  const std::string before = r.RenderPrometheus();
  EXPECT_GT(Value(before, "process_resident_memory_bytes"), 1e6);
  EXPECT_GT(Value(before, "process_open_fds"), 2);
  EXPECT_GT(Value(before, "process_max_fds"), 0);
  EXPECT_GT(Value(before, "process_start_time_seconds"), 1.6e9);
  EXPECT_GE(Value(before, "process_cpu_seconds_total"), 0);
  EXPECT_GE(Value(before, R"(inferd_process_page_faults_total{kind="major"})"), 0);
  EXPECT_EQ(Value(before, "inferd_cgroup_cpu_throttled_periods_total"), -1);
  const double minor = Value(before, R"(inferd_process_page_faults_total{kind="minor"})");
  EXPECT_GT(minor, 0);

  // Touch 256 fresh pages: the next scrape counts at least that many more.
  const size_t bytes = 256 * 4096;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  for (size_t i = 0; i < bytes; i += 4096) static_cast<volatile char*>(p)[i] = 1;
  munmap(p, bytes);
  const std::string after = r.RenderPrometheus();
  EXPECT_GE(Value(after, R"(inferd_process_page_faults_total{kind="minor"})"), minor + 256);
}

TEST(ProcessMetrics, ExportsCgroupThrottlingWhenGivenACpuStat) {
  const auto file = std::filesystem::temp_directory_path() / "inferd-cpu-stat-test";
  std::ofstream(file) << "nr_periods 40\nnr_throttled 4\nthrottled_time 2000000000\n";
  Registry r;
  ExportProcessMetrics(r, {.cpu_stat_file = file.string()});
  const std::string text = r.RenderPrometheus();
  std::filesystem::remove(file);
  EXPECT_EQ(Value(text, "inferd_cgroup_cpu_periods_total"), 40);
  EXPECT_EQ(Value(text, "inferd_cgroup_cpu_throttled_periods_total"), 4);
  EXPECT_EQ(Value(text, "inferd_cgroup_cpu_throttled_seconds_total"), 2);
}

}  // namespace
}  // namespace inferd::metrics
