#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "report/document.hpp"
#include "report/svg_chart.hpp"
#include "report/text_escape.hpp"
#include "report/writers.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;

// No scripts, fonts or external resources; the policy makes the browser refuse any that a bug
// might let through.
constexpr const char* kHead = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>mmprof report</title>
<style>
body { font-family: sans-serif; max-width: 70em; margin: 1em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
@media (max-width: 40em) { table { display: block; overflow-x: auto; } }
th { background: #f2f2f2; }
pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; }
figure { margin: 0.5em 0 1.5em; }
figcaption { font-weight: bold; margin-bottom: 0.3em; }
figure p { font-size: 0.9em; color: #444; margin: 0.3em 0 0; max-width: 45em; }
svg.chart { display: block; max-width: 100%; height: auto; }
.strong { font-weight: bold; }
</style>
</head>
<body>
)";

// Lines from [{..., points: [[x, y], ...]}], each named by `name`.
template <typename Name>
std::vector<Series> series_of(const json& data, Name name) {
  std::vector<Series> out;
  for (const auto& s : data) {
    Series series;
    series.name = name(s);
    for (const auto& p : s["points"])
      series.points.emplace_back(p[0].get<double>(), p[1].get<double>());
    for (const auto& p : s.value("pss", json::array()))
      series.dots.emplace_back(p[0].get<double>(), p[1].get<double>());
    out.push_back(std::move(series));
  }
  return out;
}

// The memory chart's legend names each process's phases; a dashed rule marks where each phase's
// sampling began (its earliest sample in any process).
std::string memory_svg(const json& data) {
  std::vector<Marker> markers;
  const auto series = series_of(data, [&](const json& s) {
    std::string phases;
    for (const auto& p : s.value("phases", json::array())) {
      const std::string name = p["phase"].get<std::string>();
      phases += (phases.empty() ? " - " : ", ") + name;
      const double from = p["from_s"].get<double>();
      auto at = std::find_if(markers.begin(), markers.end(),
                             [&](const Marker& m) { return m.name == name; });
      if (at == markers.end()) {
        markers.push_back({name, from});
      } else {
        at->x = std::min(at->x, from);
      }
    }
    return s["process"].get<std::string>() + phases;
  });
  return series.empty() ? "" : svg_lines(series, "seconds since the first sample", "MiB", markers);
}

// Throughput per arm: every arm's CI (the base's own, the arms' paired ones placed on the base
// median), the verdict at the right, the base's indifference band (+-tau) shaded.
std::string arms_svg(const json& data) {
  std::vector<ErrorBar> bars;
  std::optional<Band> band;
  for (const auto& a : data) {
    ErrorBar b{a["arm"].get<std::string>(), a["median"].get<double>(), std::nullopt, std::nullopt,
               a.value("verdict", "")};
    if (a["low"].is_number() && a["high"].is_number()) b.low = a["low"], b.high = a["high"];
    if (a.contains("band") && a["band"]["low"].is_number()) {
      band = Band{a["band"]["name"].get<std::string>(), a["band"]["low"].get<double>(),
                  a["band"]["high"].get<double>()};
    }
    bars.push_back(std::move(b));
  }
  return bars.empty() ? "" : svg_error_bars(bars, "samples/s", band);
}

// The stages in the order a sample goes through them: read, decode, augment (or a job's whole
// __getitem__, its parts and the rest of it), then the batch's collate and pin; any other after.
std::vector<Bar> stage_bars(const json& per_batch) {
  static const std::vector<std::string> kOrder = {"read",         "getitem", "decode",  "augment",
                                                  "getitem_rest", "fetch",   "collate", "pin"};
  std::vector<Bar> bars;
  for (const auto& stage : kOrder) {
    if (per_batch.contains(stage) && per_batch[stage].is_number())
      bars.push_back({stage, per_batch[stage].get<double>()});
  }
  for (const auto& [stage, ms] : per_batch.items()) {
    if (ms.is_number() && std::find(kOrder.begin(), kOrder.end(), stage) == kOrder.end())
      bars.push_back({stage, ms.get<double>()});
  }
  return bars;
}

// Each per-step breakdown column: its step (or steps), its parts' ms.
std::string steps_svg(const json& data) {
  if (!data.is_object()) return "";
  std::vector<std::string> parts;
  for (const auto& p : data["parts"])
    parts.push_back(p.get<std::string>());
  std::vector<StackColumn> columns;
  for (const auto& c : data["columns"]) {
    const auto first = c["first_step"].get<int64_t>(), last = c["last_step"].get<int64_t>();
    columns.push_back({first == last ? std::to_string(first) : fmt::format("{}-{}", first, last),
                       c["ms"].get<std::vector<double>>()});
  }
  return columns.empty()
             ? ""
             : svg_stacked_columns(
                   columns, parts,
                   fmt::format("measured step ({} phase)", data["phase"].get<std::string>()), "ms");
}

std::string chart_svg(const Chart& c) {
  if (c.kind == "stages") {
    const std::vector<Bar> bars = stage_bars(c.data);
    return bars.empty() ? "" : svg_bars(bars, "ms");
  }
  if (c.kind == "cdf") {
    // "step time" and "wait for the batch", with the phase only when the chart has two.
    std::set<std::string> phases;
    for (const auto& s : c.data)
      phases.insert(s["phase"].get<std::string>());
    const auto series = series_of(c.data, [&](const json& s) {
      const std::string what = s["column"] == "wait_ms" ? "wait for the batch" : "step time";
      return phases.size() > 1 ? what + ", " + s["phase"].get<std::string>() + " phase" : what;
    });
    return series.empty() ? "" : svg_percentiles(series, "ms");
  }
  if (c.kind == "steps") return steps_svg(c.data);
  if (c.kind == "memory") return memory_svg(c.data);
  if (c.kind == "ranks") {
    const auto series = series_of(
        c.data, [](const json& s) { return "rank " + std::to_string(s["rank"].get<int>()); });
    return series.empty() ? "" : svg_lines(series, "measured step", "ms before the sync");
  }
  return arms_svg(c.data);
}

struct HtmlBlock {
  std::string& out;
  int& figures;  // charts so far: each figure's id is chart-N-KIND, a link target

  void operator()(const Paragraph& p) const {
    out += fmt::format("<p{}>{}</p>\n", p.strong ? " class=\"strong\"" : "", html_escape(p.text));
  }
  void operator()(const Table& t) const {
    out += "<table>\n<tr>";
    for (const auto& h : t.header)
      out += "<th>" + html_escape(h) + "</th>";
    out += "</tr>\n";
    for (const auto& row : t.rows) {
      out += "<tr>";
      for (const auto& cell : row)
        out += "<td>" + html_escape(cell) + "</td>";
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
  void operator()(const CodeLines& c) const {
    out += "<pre>";
    for (const auto& l : c.lines)
      out += html_escape(l) + "\n";
    out += "</pre>\n";
  }
  void operator()(const Links& l) const {
    out += "<ul>\n";
    for (const auto& link : l.links) {
      out += fmt::format("<li><a href=\"{}\">{}</a> ({})</li>\n", html_escape(link.url),
                         html_escape(link.title), html_escape(link.note));
    }
    out += "</ul>\n";
  }
  void operator()(const Chart& c) const {
    const std::string svg = chart_svg(c);
    if (svg.empty()) return;
    out += fmt::format("<figure id=\"chart-{}-{}\">\n<figcaption>{}</figcaption>\n", ++figures,
                       html_escape(c.kind), html_escape(c.title)) +
           svg;
    if (!c.note.empty()) out += "<p>" + html_escape(c.note) + "</p>\n";
    out += "</figure>\n";
  }
};

}  // namespace

std::string render_html(const json& report) {
  std::string out = kHead;
  int figures = 0;
  for (const auto& section : layout_report(report)) {
    out += fmt::format("<h{0}>{1}</h{0}>\n", section.level, html_escape(section.title));
    for (const auto& block : section.blocks)
      std::visit(HtmlBlock{out, figures}, block);
  }
  return out + "</body>\n</html>\n";
}

}  // namespace mmprof::report
