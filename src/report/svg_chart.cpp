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
// Solid, dashed, dotted, dash-dot: a line hidden under another of the same shape still shows.
constexpr const char* kDashes[] = {"", "7 3", "2 3", "9 3 2 3"};
constexpr int kWidth = 960;
constexpr int kRight = 40;

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

std::string text(double x, double y, const std::string& s, const char* anchor = "start",
                 const char* extra = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\"{}>{}</text>\n", x, y,
                     anchor, extra, html_escape(s));
}

// The 1, 2 or 5 x 10^k nearest `x`, as its mantissa and exponent.
std::pair<double, int> nice_number(double x) {
  const int exponent = static_cast<int>(std::floor(std::log10(x)));
  const double f = x / std::pow(10.0, exponent);
  if (f >= 7) return {1, exponent + 1};
  return {f < 1.5 ? 1 : f < 3 ? 2 : 5, exponent};
}

// m x 10^e, the double nearest the decimal (10^-e is exact for a negative e, 10^e for e >= 0).
double scaled(double m, int e) {
  return e >= 0 ? m * std::pow(10.0, e) : m / std::pow(10.0, -e);
}

// The values seen, for an axis.
struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
};

// An axis through nice ticks, its ends the first and last tick: linear, or logarithmic (a value
// below the first tick, 0 included, is drawn on it).
struct Axis {
  std::vector<double> ticks;
  int decimals = 0;
  bool log = false;
  double lo() const { return ticks.front(); }
  double hi() const { return ticks.back(); }
  double map(double v, double a, double b) const {
    if (log) {
      return a + std::log10(std::max(v, lo()) / lo()) / std::log10(hi() / lo()) * (b - a);
    }
    return a + (v - lo()) / (hi() - lo()) * (b - a);
  }
  std::string label(double v) const {
    return log ? fmt::format("{:g}", v) : fmt::format("{:.{}f}", v, decimals);
  }
  // Each tick at its position between `a` and `b`, with its label.
  std::vector<std::pair<double, std::string>> placed(double a, double b) const {
    std::vector<std::pair<double, std::string>> out;
    out.reserve(ticks.size());
    for (const double v : ticks)
      out.emplace_back(map(v, a, b), label(v));
    return out;
  }
};

Axis linear_axis(Range r, bool from_zero) {
  if (!std::isfinite(r.lo)) r.lo = 0, r.hi = 1;
  if (from_zero) r.lo = std::min(0.0, r.lo);
  Axis a;
  a.ticks = nice_ticks(r.lo, r.hi);
  const double step = a.ticks[1] - a.ticks[0];
  a.decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
  return a;
}

// Decades from below `lo_positive` to above `hi`, with 2 and 5 between them when there are at
// most three decades.
Axis log_axis(double lo_positive, double hi) {
  const int first = static_cast<int>(std::floor(std::log10(lo_positive) + 1e-9));
  const int last = std::max(first + 1, static_cast<int>(std::ceil(std::log10(hi) - 1e-9)));
  Axis a;
  a.log = true;
  for (int e = first; e <= last; ++e) {
    for (const double m : {1.0, 2.0, 5.0}) {
      if (m == 1 || last - first <= 3) a.ticks.push_back(scaled(m, e));
      if (e == last) break;
    }
  }
  return a;
}

// The plot's frame: ticks and light grid lines of both axes, axis lines, the y axis's unit above
// it and the x axis's name below.
struct Frame {
  double left, right, top, bottom;

  std::string x_grid(const std::vector<std::pair<double, std::string>>& ticks) const {
    std::string out;
    for (const auto& [x, label] : ticks) {
      out += fmt::format("<path d=\"M{:.1f} {} V{}\" stroke=\"#e4e4e4\"/>\n", x, top, bottom);
      out += text(x, bottom + 14, label, "middle");
    }
    return out;
  }
  std::string y_grid(const Axis& y) const {
    std::string out;
    for (const double v : y.ticks) {
      const double p = y.map(v, bottom, top);
      out += fmt::format("<path d=\"M{} {:.1f} H{}\" stroke=\"#e4e4e4\"/>\n", left, p, right);
      out += text(left - 4, p + 4, y.label(v), "end");
    }
    return out;
  }
  std::string axes(const std::string& x_label, const std::string& y_label) const {
    return fmt::format("<path d=\"M{} {} V{} H{}\" stroke=\"#444\" fill=\"none\"/>\n", left, top,
                       bottom, right) +
           text(left, top - 8, y_label, "middle") +
           text((left + right) / 2.0, bottom + 30, x_label, "middle");
  }
};

// Each series as a path (earlier ones wider, beneath), then its legend row under the plot.
template <typename MapX, typename MapY>
std::string series_paths(const std::vector<Series>& series, const Frame& f, double legend_top,
                         MapX map_x, MapY map_y) {
  std::string out;
  const size_t n = series.size();
  for (size_t i = 0; i < n; ++i) {
    const double width = 1.5 + std::min(3.5, 0.8 * static_cast<double>(n - 1 - i));
    const char* dash = kDashes[i % std::size(kDashes)];
    const std::string dash_attr =
        *dash != '\0' ? fmt::format(" stroke-dasharray=\"{}\"", dash) : std::string();
    std::string d;
    for (const auto& [x, y] : series[i].points)
      d += fmt::format("{}{:.1f} {:.1f}", d.empty() ? "M" : " L", map_x(x), map_y(y));
    if (!d.empty()) {
      out += fmt::format(
          "<path d=\"{}\" stroke=\"{}\" stroke-width=\"{:.1f}\"{} stroke-linejoin=\"round\" "
          "fill=\"none\"/>\n",
          d, color(i), width, dash_attr);
    }
    for (const auto& [x, y] : series[i].dots) {
      out += fmt::format(
          "<circle class=\"dot\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\" "
          "stroke=\"#fff\"/>\n",
          map_x(x), map_y(y), color(i));
    }
    const double ly = legend_top + 16.0 * static_cast<double>(i);
    out += fmt::format(
        "<path d=\"M{} {:.1f} h24\" stroke=\"{}\" stroke-width=\"{:.1f}\"{} fill=\"none\"/>\n",
        f.left, ly - 4, color(i), width, dash_attr);
    out += text(f.left + 30, ly, series[i].name);
  }
  return out;
}

int lines_height(size_t series) {
  return 290 + 16 * static_cast<int>(series);
}

constexpr Frame kLineFrame{60, kWidth - kRight, 24, 250};

// The percentile axis: log10(1 / (1 - q)); the maximum at `max_at`.
double percentile_position(double q, double max_at) {
  return q >= 1 ? max_at : std::log10(1 / (1 - q));
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) hi = lo + (lo == 0 ? 1 : std::abs(lo) * 0.1);
  const auto [mantissa, exponent] = nice_number((hi - lo) / std::max(1, target));
  const double step = scaled(mantissa, exponent);
  const double first = std::floor(lo / step + 1e-9), last = std::ceil(hi / step - 1e-9);
  std::vector<double> ticks;
  for (double k = first; k <= last; ++k)
    ticks.push_back(scaled(k * mantissa, exponent));
  if (ticks.size() < 2) ticks.push_back(scaled((last + 1) * mantissa, exponent));
  return ticks;
}

std::string svg_bars(const std::vector<Bar>& bars, const std::string& unit) {
  const int row = 22, left = 170;
  const int axis_y = 5 + static_cast<int>(bars.size()) * row;
  const double right = kWidth - kRight - 90;
  Range r;
  for (const auto& b : bars)
    r.add(b.value);
  const Axis axis = linear_axis(r, true);
  const Frame f{left, right, 5, static_cast<double>(axis_y)};
  std::string out = open_svg(axis_y + 22, "bar chart") + f.x_grid(axis.placed(left, right));
  for (size_t i = 0; i < bars.size(); ++i) {
    const double y = 5 + static_cast<double>(i) * row;
    const double w = std::max(0.0, axis.map(bars[i].value, left, right) - left);
    out += text(left - 6, y + 14, bars[i].label, "end");
    out += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"16\" fill=\"{}\"/>\n",
                       left, y + 2, w, color(i));
    out += text(left + w + 6, y + 14, fmt::format("{:.3g} {}", bars[i].value, unit));
  }
  out += fmt::format("<path d=\"M{} 5 V{}\" stroke=\"#444\"/>\n", left, axis_y);
  return out + "</svg>\n";
}

std::string svg_lines(const std::vector<Series>& series, const std::string& x_label,
                      const std::string& y_label, const std::vector<Marker>& markers) {
  const Frame& f = kLineFrame;
  Range xr, yr;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points)
      xr.add(x), yr.add(y);
    for (const auto& [x, y] : s.dots)
      xr.add(x), yr.add(y);
  }
  for (const auto& m : markers)
    xr.add(m.x);
  const Axis x = linear_axis(xr, false), y = linear_axis(yr, true);
  std::string out = open_svg(lines_height(series.size()), "line chart") +
                    f.x_grid(x.placed(f.left, f.right)) + f.y_grid(y) + f.axes(x_label, y_label);
  // A marker's name goes on the first line where it clears the names before it.
  std::vector<Marker> by_x = markers;
  std::stable_sort(by_x.begin(), by_x.end(),
                   [](const Marker& a, const Marker& b) { return a.x < b.x; });
  // Phases that began within a few pixels of each other (setup, then warm-up at once) share
  // one rule.
  std::vector<Marker> merged;
  for (const auto& m : by_x) {
    if (!merged.empty() &&
        x.map(m.x, f.left, f.right) - x.map(merged.back().x, f.left, f.right) < 4) {
      merged.back().name += " / " + m.name;
    } else {
      merged.push_back(m);
    }
  }
  std::vector<double> line_ends;
  for (const auto& m : merged) {
    const double p = x.map(m.x, f.left, f.right);
    out += fmt::format(
        "<path class=\"marker\" d=\"M{:.1f} {} V{}\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n",
        p, f.top, f.bottom);
    size_t line = 0;
    while (line < line_ends.size() && line_ends[line] > p)
      ++line;
    if (line == line_ends.size()) line_ends.push_back(0);
    line_ends[line] = p + 3 + 6.5 * static_cast<double>(m.name.size()) + 4;
    out +=
        text(p + 3, f.top + 10 + 12 * static_cast<double>(line), m.name, "start", " fill=\"#555\"");
  }
  out += series_paths(
      series, f, f.bottom + 50, [&](double v) { return x.map(v, f.left, f.right); },
      [&](double v) { return y.map(v, f.bottom, f.top); });
  return out + "</svg>\n";
}

std::string svg_percentiles(const std::vector<Series>& series, const std::string& y_label) {
  const Frame& f = kLineFrame;
  double last = 1;  // the largest percentile resolved, at least p90
  bool has_max = false;
  Range yr;
  double lo_positive = std::numeric_limits<double>::infinity();
  for (const auto& s : series) {
    for (const auto& [value, q] : s.points) {
      yr.add(value);
      if (value > 0) lo_positive = std::min(lo_positive, value);
      if (q >= 1) has_max = true;
      if (q < 1) last = std::max(last, percentile_position(q, 0));
    }
  }
  const double max_at = last + 0.5;
  const double span = has_max ? max_at : last;
  const auto map_x = [&](double q) {
    return f.left + percentile_position(q, max_at) / span * (f.right - f.left);
  };
  std::vector<std::pair<double, std::string>> ticks = {{map_x(0), "min"}, {map_x(0.5), "p50"}};
  for (int k = 1; k <= static_cast<int>(last + 1e-9); ++k) {
    const double q = 1 - std::pow(10.0, -k);
    ticks.emplace_back(map_x(q), fmt::format("p{:g}", 100 * q));
  }
  if (has_max) ticks.emplace_back(map_x(1), "max");
  // Latency spanning more than two decades (a stall among fast steps) gets a log axis.
  const bool wide = std::isfinite(lo_positive) && yr.hi / lo_positive > 100;
  const Axis y = wide ? log_axis(lo_positive, yr.hi) : linear_axis(yr, true);
  std::string out = open_svg(lines_height(series.size()), "latency by percentile") +
                    f.x_grid(ticks) + f.y_grid(y) +
                    f.axes("percentile (log scale of 1 / (1 - p))", y_label);
  std::vector<Series> by_percentile = series;  // (value, fraction) to (fraction, value)
  for (auto& s : by_percentile) {
    for (auto& p : s.points)
      std::swap(p.first, p.second);
  }
  out += series_paths(by_percentile, f, f.bottom + 50, map_x,
                      [&](double v) { return y.map(v, f.bottom, f.top); });
  return out + "</svg>\n";
}

std::string svg_stacked_columns(const std::vector<StackColumn>& columns,
                                const std::vector<std::string>& parts, const std::string& x_label,
                                const std::string& y_label) {
  const Frame& f = kLineFrame;
  Range yr;
  for (const auto& c : columns) {
    double sum = 0;
    for (const double v : c.values)
      sum += std::max(0.0, v);
    yr.add(sum);
  }
  const Axis y = linear_axis(yr, true);
  const double slot = (f.right - f.left) / static_cast<double>(std::max<size_t>(1, columns.size()));
  const double bar = std::max(1.0, slot * 0.8);
  // About eight x labels, on columns evenly apart.
  const size_t every = std::max<size_t>(1, (columns.size() + 7) / 8);
  std::vector<std::pair<double, std::string>> ticks;
  for (size_t i = 0; i < columns.size(); i += every)
    ticks.emplace_back(f.left + slot * (static_cast<double>(i) + 0.5), columns[i].label);
  std::string out = open_svg(lines_height(parts.size()), "stacked columns") + f.x_grid(ticks) +
                    f.y_grid(y) + f.axes(x_label, y_label);
  for (size_t i = 0; i < columns.size(); ++i) {
    double base = 0;
    for (size_t k = 0; k < parts.size() && k < columns[i].values.size(); ++k) {
      const double v = std::max(0.0, columns[i].values[k]);
      if (v <= 0) continue;
      const double top = y.map(base + v, f.bottom, f.top), bottom = y.map(base, f.bottom, f.top);
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n",
          f.left + slot * static_cast<double>(i) + (slot - bar) / 2, top, bar, bottom - top,
          color(k));
      base += v;
    }
  }
  for (size_t k = 0; k < parts.size(); ++k) {
    const double ly = f.bottom + 50 + 16.0 * static_cast<double>(k);
    out += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"24\" height=\"10\" fill=\"{}\"/>\n",
                       f.left, ly - 9, color(k));
    out += text(f.left + 30, ly, parts[k]);
  }
  return out + "</svg>\n";
}

std::string svg_error_bars(const std::vector<ErrorBar>& bars, const std::string& unit,
                           const std::optional<Band>& band) {
  const int row = 24, top = 10, left = 170, right = kWidth - 110;
  const int axis_y = top + static_cast<int>(bars.size()) * row;
  Range r;
  for (const auto& b : bars) {
    r.add(b.value);
    if (b.low) r.add(*b.low);
    if (b.high) r.add(*b.high);
  }
  if (band) r.add(band->low), r.add(band->high);
  const Axis axis = linear_axis(r, false);
  const auto map = [&](double v) { return axis.map(v, left, right); };
  const Frame f{left, right, static_cast<double>(top), static_cast<double>(axis_y)};
  std::string out = open_svg(axis_y + (band ? 52 : 36), "throughput per arm");
  if (band) {
    out += fmt::format(
        "<rect class=\"band\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" "
        "fill=\"#e6e6e6\"/>\n",
        map(band->low), top, std::max(1.0, map(band->high) - map(band->low)), axis_y - top);
  }
  out += f.x_grid(axis.placed(left, right));
  out += fmt::format("<path d=\"M{} {} H{}\" stroke=\"#444\"/>\n", left, axis_y, right);
  out += text((left + right) / 2.0, axis_y + 28, unit, "middle");
  if (band) {
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"10\" fill=\"#e6e6e6\"/>\n",
                       left, axis_y + 36);
    out += text(left + 18, axis_y + 45, band->name);
  }
  for (size_t i = 0; i < bars.size(); ++i) {
    const double y = top + row * (static_cast<double>(i) + 0.5);
    out += text(left - 6, y + 4, bars[i].label, "end");
    if (bars[i].low && bars[i].high) {
      const double lo = map(*bars[i].low), hi = map(*bars[i].high);
      out += fmt::format(
          "<path class=\"ci\" d=\"M{0:.1f} {1:.1f} H{2:.1f} M{0:.1f} {3:.1f} V{4:.1f} M{2:.1f} "
          "{3:.1f} V{4:.1f}\" stroke=\"{5}\" stroke-width=\"1.5\"/>\n",
          lo, y, hi, y - 5, y + 5, color(i));
    }
    out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>\n",
                       map(bars[i].value), y, color(i));
    if (!bars[i].mark.empty())
      out += text(right + 8, y + 4, bars[i].mark, "start", " font-weight=\"bold\"");
  }
  return out + "</svg>\n";
}

}  // namespace mmprof::report
