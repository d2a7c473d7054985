#include "report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/text_escape.hpp"

namespace mmprof::report {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr int kWidth = 640;
constexpr int kLeft = 170, kRight = 40;

const char* color(size_t i) {
  return kPalette[i % std::size(kPalette)];
}

std::string open_svg(int height, const std::string& label) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" aria-label=\"{}\" "
      "width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n",
      html_escape(label), kWidth, height, kWidth, height);
}

std::string text(double x, double y, const std::string& s, const char* anchor = "start") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\">{}</text>\n", x, y, anchor,
                     html_escape(s));
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  // A usable span even for one value or none.
  void settle() {
    if (!std::isfinite(lo)) lo = 0, hi = 1;
    if (hi <= lo) hi = lo + 1;
  }
  double map(double v, double a, double b) const { return a + (v - lo) / (hi - lo) * (b - a); }
};

std::string axis_ticks(const Range& r, bool horizontal, double a, double b, double at) {
  std::string out;
  for (int i = 0; i <= 4; ++i) {
    const double v = r.lo + (r.hi - r.lo) * i / 4.0;
    const double p = r.map(v, a, b);
    const std::string label = fmt::format("{:.3g}", v);
    out += horizontal ? text(p, at + 14, label, "middle") : text(at - 4, p + 4, label, "end");
  }
  return out;
}

}  // namespace

std::string svg_bars(const std::vector<Bar>& bars, const std::string& unit) {
  const int row = 22, height = static_cast<int>(bars.size()) * row + 10;
  double max = 0;
  for (const auto& b : bars)
    max = std::max(max, b.value);
  std::string out = open_svg(height, "bar chart");
  for (size_t i = 0; i < bars.size(); ++i) {
    const double y = 5 + static_cast<double>(i) * row;
    const double w = max > 0 ? bars[i].value / max * (kWidth - kLeft - kRight - 90) : 0;
    out += text(kLeft - 6, y + 14, bars[i].label, "end");
    out += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"16\" fill=\"{}\"/>\n",
                       kLeft, y + 2, std::max(0.0, w), color(i));
    out += text(kLeft + w + 6, y + 14, fmt::format("{:.3g} {}", bars[i].value, unit));
  }
  return out + "</svg>\n";
}

std::string svg_lines(const std::vector<Series>& series, const std::string& x_label,
                      const std::string& y_label) {
  const int height = 300, top = 10, bottom = 250;
  const int legend_x = kLeft, plot_right = kWidth - kRight;
  Range xr, yr;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points)
      xr.add(x), yr.add(y);
  }
  xr.settle();
  yr.settle();
  std::string out = open_svg(height + 16 * static_cast<int>(series.size()), "line chart");
  out += fmt::format("<path d=\"M{} {} V{} H{}\" stroke=\"#444\" fill=\"none\"/>\n", kLeft, top,
                     bottom, plot_right);
  out += axis_ticks(xr, true, kLeft, plot_right, bottom);
  out += axis_ticks(yr, false, bottom, top, kLeft);
  out += text((kLeft + plot_right) / 2.0, bottom + 30, x_label, "middle");
  out += text(kLeft - 50, top + 4, y_label, "end");
  for (size_t i = 0; i < series.size(); ++i) {
    std::string d;
    for (const auto& [x, y] : series[i].points) {
      d += fmt::format("{}{:.1f} {:.1f}", d.empty() ? "M" : " L", xr.map(x, kLeft, plot_right),
                       yr.map(y, bottom, top));
    }
    if (!d.empty()) {
      out += fmt::format("<path d=\"{}\" stroke=\"{}\" stroke-width=\"1.5\" fill=\"none\"/>\n", d,
                         color(i));
    }
    const double ly = height + 16.0 * static_cast<double>(i);
    out += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"12\" height=\"4\" fill=\"{}\"/>\n",
                       legend_x, ly - 6, color(i));
    out += text(legend_x + 18, ly, series[i].name);
  }
  return out + "</svg>\n";
}

std::string svg_error_bars(const std::vector<ErrorBar>& bars, const std::string& unit) {
  const int row = 24, top = 10;
  const int height = top + static_cast<int>(bars.size()) * row + 30;
  const int plot_right = kWidth - kRight;
  Range r;
  for (const auto& b : bars) {
    r.add(b.value);
    if (b.low) r.add(*b.low);
    if (b.high) r.add(*b.high);
  }
  r.settle();
  const double pad = (r.hi - r.lo) * 0.1;
  r.lo -= pad;
  r.hi += pad;
  const int axis_y = top + static_cast<int>(bars.size()) * row;
  std::string out = open_svg(height, "throughput per arm");
  out += fmt::format("<path d=\"M{} {} H{}\" stroke=\"#444\"/>\n", kLeft, axis_y, plot_right);
  out += axis_ticks(r, true, kLeft, plot_right, axis_y);
  out += text((kLeft + plot_right) / 2.0, axis_y + 28, unit, "middle");
  for (size_t i = 0; i < bars.size(); ++i) {
    const double y = top + row * (static_cast<double>(i) + 0.5);
    out += text(kLeft - 6, y + 4, bars[i].label, "end");
    if (bars[i].low && bars[i].high) {
      out += fmt::format(
          "<path class=\"ci\" d=\"M{:.1f} {:.1f} H{:.1f} M{:.1f} {:.1f} V{:.1f} M{:.1f} {:.1f} "
          "V{:.1f}\" stroke=\"{}\"/>\n",
          r.map(*bars[i].low, kLeft, plot_right), y, r.map(*bars[i].high, kLeft, plot_right),
          r.map(*bars[i].low, kLeft, plot_right), y - 5, y + 5,
          r.map(*bars[i].high, kLeft, plot_right), y - 5, y + 5, color(i));
    }
    out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>\n",
                       r.map(bars[i].value, kLeft, plot_right), y, color(i));
  }
  return out + "</svg>\n";
}

}  // namespace mmprof::report
