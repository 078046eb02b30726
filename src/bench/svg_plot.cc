#include "bench/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace inferd::bench {

namespace {

constexpr double kWidth = 760, kHeight = 480;
constexpr double kLeft = 80, kRight = 170, kTop = 50, kBottom = 70;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;
constexpr const char* kP50Color = "#1f77b4";
constexpr const char* kP99Color = "#d62728";

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string TickLabel(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::string Text(double x, double y, const std::string& s, const char* anchor = "middle",
                 int size = 12, const char* extra = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"" + std::to_string(size) + "\"" + extra + ">" + Escape(s) + "</text>\n";
}

}  // namespace

std::vector<double> NiceTicks(double max, int target) {
  if (!(max > 0) || !std::isfinite(max)) max = 1;
  const double raw = max / std::max(target - 1, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (int i = 0;; ++i) {
    const double v = i * step;
    ticks.push_back(v);
    if (v >= max * (1 - 1e-12)) break;
  }
  return ticks;
}

std::string RenderCurveSvg(const std::vector<StepResult>& steps, const PlotOptions& options) {
  double max_x = 0, max_y = options.budget_ms;
  for (const StepResult& s : steps) {
    max_x = std::max(max_x, s.requests_per_s);
    max_y = std::max({max_y, s.latency.p50_ms, s.latency.p99_ms});
  }
  const std::vector<double> xt = NiceTicks(max_x * 1.05);
  const std::vector<double> yt = NiceTicks(max_y * 1.05);
  const double x_end = xt.back(), y_end = yt.back();
  auto px = [&](double v) { return kLeft + v / x_end * kPlotW; };
  auto py = [&](double v) { return kTop + kPlotH - v / y_end * kPlotH; };

  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(kWidth) + "\" height=\"" +
         Num(kHeight) + "\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(kHeight) +
         "\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += Text(kLeft + kPlotW / 2, 28, options.title, "middle", 16, " font-weight=\"bold\"");

  // Grid, ticks and tick labels.
  svg += "<g id=\"x-axis\" stroke=\"#000\">\n";
  for (double v : xt) {
    svg += "<line x1=\"" + Num(px(v)) + "\" y1=\"" + Num(kTop) + "\" x2=\"" + Num(px(v)) +
           "\" y2=\"" + Num(kTop + kPlotH) + "\" stroke=\"#e5e5e5\"/>\n";
    svg += "<line x1=\"" + Num(px(v)) + "\" y1=\"" + Num(kTop + kPlotH) + "\" x2=\"" + Num(px(v)) +
           "\" y2=\"" + Num(kTop + kPlotH + 6) + "\"/>\n";
    svg += Text(px(v), kTop + kPlotH + 22, TickLabel(v), "middle", 12, " stroke=\"none\"");
  }
  svg += "</g>\n<g id=\"y-axis\" stroke=\"#000\">\n";
  for (double v : yt) {
    svg += "<line x1=\"" + Num(kLeft) + "\" y1=\"" + Num(py(v)) + "\" x2=\"" + Num(kLeft + kPlotW) +
           "\" y2=\"" + Num(py(v)) + "\" stroke=\"#e5e5e5\"/>\n";
    svg += "<line x1=\"" + Num(kLeft - 6) + "\" y1=\"" + Num(py(v)) + "\" x2=\"" + Num(kLeft) +
           "\" y2=\"" + Num(py(v)) + "\"/>\n";
    svg += Text(kLeft - 10, py(v) + 4, TickLabel(v), "end", 12, " stroke=\"none\"");
  }
  svg += "</g>\n";
  svg += "<rect x=\"" + Num(kLeft) + "\" y=\"" + Num(kTop) + "\" width=\"" + Num(kPlotW) +
         "\" height=\"" + Num(kPlotH) + "\" fill=\"none\" stroke=\"#000\"/>\n";
  svg += Text(kLeft + kPlotW / 2, kHeight - 22, "throughput (requests/s)", "middle", 14);
  const std::string cy = Num(kTop + kPlotH / 2);
  svg += "<text x=\"22\" y=\"" + cy +
         "\" text-anchor=\"middle\" font-size=\"14\" "
         "transform=\"rotate(-90 22 " +
         cy + ")\">latency (ms)</text>\n";

  if (options.budget_ms > 0) {
    const std::string y = Num(py(options.budget_ms));
    svg += "<line id=\"budget\" x1=\"" + Num(kLeft) + "\" y1=\"" + y + "\" x2=\"" +
           Num(kLeft + kPlotW) + "\" y2=\"" + y + "\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>\n";
    svg += Text(kLeft + kPlotW - 6, py(options.budget_ms) - 6,
                "p" + std::to_string(options.budget_percentile) + " budget " +
                    TickLabel(options.budget_ms) + " ms",
                "end", 11, " fill=\"#555\"");
  }

  // Series: a polyline, markers and load labels (p99 above, p50 below).
  struct Series {
    const char* name;
    const char* color;
    bool p99;
  };
  for (const Series& series : {Series{"p50", kP50Color, false}, Series{"p99", kP99Color, true}}) {
    std::string points;
    std::string marks;
    for (const StepResult& s : steps) {
      const double x = px(s.requests_per_s);
      const double y = py(series.p99 ? s.latency.p99_ms : s.latency.p50_ms);
      points += Num(x) + "," + Num(y) + " ";
      marks += series.p99 ? "<rect x=\"" + Num(x - 4) + "\" y=\"" + Num(y - 4) +
                                "\" width=\"8\" height=\"8\" fill=\"" + series.color + "\"/>\n"
                          : "<circle cx=\"" + Num(x) + "\" cy=\"" + Num(y) +
                                "\" r=\"4.5\" fill=\"" + series.color + "\"/>\n";
      marks += Text(x + 6, series.p99 ? y - 8 : y + 16, s.label, "start", 11,
                    series.p99 ? " fill=\"#d62728\"" : " fill=\"#1f77b4\"");
    }
    svg += "<g id=\"series-" + std::string(series.name) + "\">\n";
    svg += "<polyline points=\"" + points + "\" fill=\"none\" stroke=\"" + series.color +
           "\" stroke-width=\"2\"/>\n" + marks + "</g>\n";
  }

  // Legend.
  const double lx = kLeft + kPlotW + 16, ly = kTop + 10;
  svg += "<g id=\"legend\">\n";
  svg += "<circle cx=\"" + Num(lx + 8) + "\" cy=\"" + Num(ly + 8) + "\" r=\"4.5\" fill=\"" +
         kP50Color + "\"/>\n";
  svg += Text(lx + 20, ly + 12, "p50 latency", "start", 12);
  svg += "<rect x=\"" + Num(lx + 4) + "\" y=\"" + Num(ly + 26) +
         "\" width=\"8\" height=\"8\" "
         "fill=\"" +
         kP99Color + "\"/>\n";
  svg += Text(lx + 20, ly + 34, "p99 latency", "start", 12);
  svg += Text(lx, ly + 60, "labels: load of the step", "start", 10, " fill=\"#555\"");
  svg += Text(lx, ly + 74, "(c = concurrency,", "start", 10, " fill=\"#555\"");
  svg += Text(lx, ly + 88, " r = requests/s sent)", "start", 10, " fill=\"#555\"");
  svg += "</g>\n</svg>\n";
  return svg;
}

}  // namespace inferd::bench
