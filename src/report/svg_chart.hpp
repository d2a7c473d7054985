#pragma once
// Inline SVG charts for report.html: plain elements, no scripts, every label HTML-escaped.
// Pure functions of their data, so tests can parse the output.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mmprof::report {

struct Bar {
  std::string label;
  double value = 0;
};
// Horizontal bars, longest = full width; `unit` follows each value.
std::string svg_bars(const std::vector<Bar>& bars, const std::string& unit);

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
};
// Lines over shared linear axes, with a legend.
std::string svg_lines(const std::vector<Series>& series, const std::string& x_label,
                      const std::string& y_label);

struct ErrorBar {
  std::string label;
  double value = 0;
  std::optional<double> low, high;  // the interval, when known
};
// One dot per label with its interval as a whisker, on a shared horizontal axis.
std::string svg_error_bars(const std::vector<ErrorBar>& bars, const std::string& unit);

}  // namespace mmprof::report
