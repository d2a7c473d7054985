#pragma once
// Inline SVG charts for report.html: plain elements, no scripts, every label HTML-escaped.
// Pure functions of their data, so tests can parse the output. Axes carry nice-number ticks
// (steps of 1, 2 or 5 x 10^k, after Heckbert, "Nice numbers for graph labels", Graphics Gems);
// charts scale down to the page's width (a viewBox, sized by report.html's CSS).
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mmprof::report {

// Round tick values covering [lo, hi] with about `target` intervals: the first is <= lo and the
// last >= hi, evenly spaced by a nice step.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

struct Bar {
  std::string label;
  double value = 0;
};
// Horizontal bars from 0 on a ticked axis; `unit` follows each value.
std::string svg_bars(const std::vector<Bar>& bars, const std::string& unit);

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), joined by the line
  std::vector<std::pair<double, double>> dots;    // (x, y), marked apart in the line's colour
};
// A dashed vertical rule across a line chart at `x`, named at its top (a phase's start).
struct Marker {
  std::string name;
  double x = 0;
};
// Lines over shared linear axes (y from 0), with a legend. Every series stays visible where
// lines coincide: each has its own dash pattern, and earlier ones are drawn wider beneath. Markers
// closer than a few pixels share one rule, named "a / b".
std::string svg_lines(const std::vector<Series>& series, const std::string& x_label,
                      const std::string& y_label, const std::vector<Marker>& markers = {});

// Latency by percentile, HdrHistogram's view of a tail: series of (value, cumulative fraction),
// the percentile axis logarithmic in 1 / (1 - fraction), so 90, 99 and 99.9 % are evenly
// spaced, ticked up to the largest fraction the data resolves; a fraction of 1 (the maximum) sits
// half a decade past the largest other and is ticked "max".
std::string svg_percentiles(const std::vector<Series>& series, const std::string& y_label);

// Stacked columns, one per x (a measured step, or a run of them), each the sum of its parts
// (`parts` names them, in stacking order from the axis up; every column has one value per part),
// on a linear y axis from 0, with a legend of the parts.
struct StackColumn {
  std::string label;  // the x axis's tick for the column ("12", "40-59")
  std::vector<double> values;
};
std::string svg_stacked_columns(const std::vector<StackColumn>& columns,
                                const std::vector<std::string>& parts, const std::string& x_label,
                                const std::string& y_label);

struct ErrorBar {
  std::string label;
  double value = 0;
  std::optional<double> low, high;  // the interval, when known
  std::string mark;                 // the verdict, written right of the chart
};
// A shaded band on the value axis (the indifference band around the base).
struct Band {
  std::string name;
  double low = 0, high = 0;
};
// One dot per label with its interval as a whisker on a shared horizontal axis, each row's mark
// on its right, and the band (when given) shaded behind.
std::string svg_error_bars(const std::vector<ErrorBar>& bars, const std::string& unit,
                           const std::optional<Band>& band = std::nullopt);

}  // namespace mmprof::report
