// report/text_escape, svg_chart, markdown and HTML writers: escaping of everything that came from
// a file, chart structure, and golden files (numbers compared fuzzily) for the fixture inputs.
// MMPROF_UPDATE_GOLDEN=1 rewrites the golden files.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "report/criteria.hpp"
#include "report/defaults.hpp"
#include "report/knowledge_base.hpp"
#include "report/report_builder.hpp"
#include "report/svg_chart.hpp"
#include "report/terminal_summary.hpp"
#include "report/text_escape.hpp"
#include "report/writers.hpp"
#include "support/test_support.hpp"

namespace mmprof::report {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kFixtures = test::source_dir() / "tests/fixtures/report";

TEST(ReportEscape, HtmlAndMarkdown) {
  EXPECT_EQ(html_escape("<script>alert('x')</script>&\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;");
  EXPECT_EQ(md_escape("a|b `c` *d* <i>\n"), "a\\|b \\`c\\` \\*d\\* &lt;i&gt; ");
}

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = 0; (at = s.find(what, at)) != std::string::npos; at += what.size())
    ++n;
  return n;
}

TEST(ReportSvg, ChartsEscapeLabelsAndDrawEveryElement) {
  const std::string bars = svg_bars({{"<b>", 1.0}, {"decode", 3.0}}, "ms");
  EXPECT_EQ(bars.find("<b>"), std::string::npos);
  EXPECT_NE(bars.find("&lt;b&gt;"), std::string::npos);
  EXPECT_EQ(count_of(bars, "<rect"), 2u);
  const std::string lines = svg_lines({{"a", {{0, 0}, {1, 1}}, {{0.5, 0.25}}}, {"b", {{0, 1}}, {}}},
                                      "x", "y", {{"pipeline", 0.5}, {"tail", 0.502}});
  EXPECT_NE(lines.find("<path d=\"M"), std::string::npos);
  EXPECT_NE(lines.find("class=\"marker\""), std::string::npos);
  // Markers a pixel apart share one rule; a dot is drawn where its series has one.
  EXPECT_NE(lines.find(">pipeline / tail</text>"), std::string::npos) << lines;
  EXPECT_EQ(count_of(lines, "class=\"marker\""), 1u);
  EXPECT_EQ(count_of(lines, "class=\"dot\""), 1u);
  const std::string columns = svg_stacked_columns({{"0", {10, 70, 5}}, {"1", {40, 70, 0}}},
                                                  {"wait", "compute", "other"}, "step", "ms");
  EXPECT_EQ(count_of(columns, "<rect"), 5u + 3u);  // 5 non-zero parts, 3 legend swatches
  EXPECT_NE(columns.find(">compute</text>"), std::string::npos);
  const std::string arms =
      svg_error_bars({{"base", 100, 98.0, 103.0, ""}, {"arm", 110, 105.0, 115.0, "ADOPT"}},
                     "samples/s", Band{"band", 98, 102});
  EXPECT_EQ(count_of(arms, "class=\"ci\""), 2u);  // the base's interval too
  EXPECT_NE(arms.find("class=\"band\""), std::string::npos);
  EXPECT_NE(arms.find(">ADOPT</text>"), std::string::npos);
  EXPECT_EQ(arms.find("nan"), std::string::npos);
}

TEST(ReportSvg, TicksAreNiceNumbersCoveringTheData) {
  EXPECT_EQ(nice_ticks(0, 137.3), (std::vector<double>{0, 20, 40, 60, 80, 100, 120, 140}));
  EXPECT_EQ(nice_ticks(0.013, 0.047),
            (std::vector<double>{0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.045, 0.05}));
  EXPECT_EQ(nice_ticks(96.2, 111.9), (std::vector<double>{95, 100, 105, 110, 115}));
  EXPECT_EQ(nice_ticks(5, 5).front(), 5);  // one value: still an axis
  EXPECT_GE(nice_ticks(5, 5).size(), 2u);
}

// Tick labels of a chart's x axis: the text of every <text> at `y`.
std::vector<std::string> labels_at_y(const std::string& svg, const std::string& y) {
  std::vector<std::string> out;
  const std::string key = "y=\"" + y + "\" text-anchor=\"middle\">";
  for (size_t at = 0; (at = svg.find(key, at)) != std::string::npos; at += key.size())
    out.push_back(svg.substr(at + key.size(), svg.find('<', at) - at - key.size()));
  return out;
}

// The tail gets as much width as the body: p90, p99, p99.9 ticks evenly spaced, then max.
TEST(ReportSvg, PercentileAxisStretchesTheTail) {
  Series s{"step_ms", {}, {}};
  for (const double q : {0.0, 0.5, 0.9, 0.99, 0.999})
    s.points.emplace_back(10 + 100 * q, q);
  s.points.emplace_back(500, 1.0);
  const std::string svg = svg_percentiles({s, {"wait_ms", {{1, 0}, {2, 1}}, {}}}, "ms");
  EXPECT_EQ(labels_at_y(svg, "264.0"),
            (std::vector<std::string>{"min", "p50", "p90", "p99", "p99.9", "max"}));
  // Both series and their legend rows: solid and dashed.
  EXPECT_NE(svg.find("stroke-dasharray=\"7 3\""), std::string::npos);
  EXPECT_NE(svg.find(">wait_ms</text>"), std::string::npos);
}

// Numbers equal within a relative 1e-6 (other platforms' last digits), everything else exact.
void expect_fuzzy_equal(const json& want, const json& got, const std::string& path) {
  if (want.is_number() && got.is_number()) {
    const double a = want.get<double>(), b = got.get<double>();
    EXPECT_LE(std::fabs(a - b), 1e-6 * std::max(1.0, std::fabs(a))) << path;
    return;
  }
  ASSERT_EQ(want.type(), got.type()) << path;
  if (want.is_object()) {
    ASSERT_EQ(want.size(), got.size()) << path;
    for (const auto& [k, v] : want.items()) {
      ASSERT_TRUE(got.contains(k)) << path << "/" << k;
      expect_fuzzy_equal(v, got[k], path + "/" + k);
    }
  } else if (want.is_array()) {
    ASSERT_EQ(want.size(), got.size()) << path;
    for (size_t i = 0; i < want.size(); ++i)
      expect_fuzzy_equal(want[i], got[i], path + "/" + std::to_string(i));
  } else {
    EXPECT_EQ(want, got) << path;
  }
}

// Text with its numbers compared fuzzily: the non-numeric parts must match exactly.
void expect_text_fuzzy_equal(const std::string& want, const std::string& got) {
  static const std::regex number(R"([-+]?[0-9]+\.[0-9]+)");
  std::vector<double> want_numbers, got_numbers;
  auto numbers = [&](const std::string& s, std::vector<double>& out) {
    for (std::sregex_iterator it(s.begin(), s.end(), number), end; it != end; ++it)
      out.push_back(std::stod(it->str()));
    return std::regex_replace(s, number, "#");
  };
  EXPECT_EQ(numbers(want, want_numbers), numbers(got, got_numbers));
  ASSERT_EQ(want_numbers.size(), got_numbers.size());
  for (size_t i = 0; i < want_numbers.size(); ++i)
    EXPECT_NEAR(want_numbers[i], got_numbers[i], 0.011 * std::max(1.0, std::fabs(want_numbers[i])));
}

json fixture_report() {
  ReportInputs in;
  in.knowledge_base = parse_knowledge_base(default_knowledge_base_yaml(), "embedded");
  in.criteria = parse_criteria(default_criteria_yaml(), "embedded");
  in.criteria_name = "embedded configs/report/criteria.yaml";
  in.gated = true;
  in.runs.push_back(load_run(kFixtures / "run-input-bound"));
  in.runs.back().dir =
      "run-input-bound";  // paths in the golden files do not depend on the checkout
  in.experiments.push_back(load_experiment(kFixtures / "experiment"));
  in.experiments.back().dir = "experiment";
  json r = build_report(in);
  r.erase("mmprof");  // version and commit change with every build
  // `dir` is the absolute path (it depends on the working directory): checked here, then the
  // name stands in for it in the golden files.
  for (const char* section : {"runs", "experiments"}) {
    for (auto& x : r[section]) {
      EXPECT_EQ(x["dir"], fs::absolute(x["name"].get<std::string>()).lexically_normal().string());
      x["dir"] = x["name"];
    }
  }
  return r;
}

void check_golden(const fs::path& golden, const std::string& got, bool json_file) {
  if (std::getenv("MMPROF_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden, std::ios::binary) << got;
    GTEST_SKIP() << "rewrote " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden;
  if (json_file) {
    expect_fuzzy_equal(json::parse(test::read_text(golden)), json::parse(got), "");
  } else {
    expect_text_fuzzy_equal(test::read_text(golden), got);
  }
}

TEST(ReportGolden, ReportJson) {
  check_golden(kFixtures / "golden/report.json", fixture_report().dump(2) + "\n", true);
}

TEST(ReportGolden, ReportMarkdown) {
  check_golden(kFixtures / "golden/report.md", render_markdown(fixture_report()), false);
}

TEST(ReportHtml, SelfContainedAndEscaped) {
  const std::string html = render_html(fixture_report());
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<b>bad"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;.jpg"), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);  // nothing fetched from outside
  EXPECT_EQ(html.find("@import"), std::string::npos);
  // Stage breakdown, latency by percentile, time per step, memory, arms.
  EXPECT_EQ(count_of(html, "<svg"), 5u);
  // The stages in pipeline order (read before decode before augment, collate last), not by name.
  const size_t read = html.find(">read</text>"), decode = html.find(">decode</text>"),
               augment = html.find(">augment</text>"), collate = html.find(">collate</text>");
  ASSERT_NE(collate, std::string::npos);
  EXPECT_LT(read, decode);
  EXPECT_LT(decode, augment);
  EXPECT_LT(augment, collate);
}

// The terminal summary on a terminal (issue 33, item 7): lines past the width break at spaces,
// continued two columns deeper than they start; characters, not bytes, are counted (±, ≥).
TEST(TerminalText, LongLinesWrapAtSpacesWithAHangingIndent) {
  const std::string text =
      "short line\n"
      "bottleneck: input-bound: the step waited for data 31.7 % of its time (≥ 20 %)\n"
      "  likely cause: worker 0's fetches take 278.9 ms ± 3 against 203.6 ms for the others\n"
      "  averyveryveryverylongwordwithnospaceatallthatexceedsthewidth and more\n";
  EXPECT_EQ(wrap_lines(text, 0), text);
  EXPECT_EQ(wrap_lines(text, 200), text);
  EXPECT_EQ(wrap_lines(text, 40),
            "short line\n"
            "bottleneck: input-bound: the step waited\n"
            "  for data 31.7 % of its time (≥ 20 %)\n"
            "  likely cause: worker 0's fetches take\n"
            "    278.9 ms ± 3 against 203.6 ms for\n"
            "    the others\n"
            "  averyveryveryverylongwordwithnospaceatallthatexceedsthewidth\n"
            "    and more\n");
  for (const std::string width : {"40", "60"}) {
    std::istringstream lines(wrap_lines(text, std::stoul(width)));
    for (std::string line; std::getline(lines, line);) {
      if (line.find("averyvery") != std::string::npos) continue;
      size_t chars = 0;
      for (const char c : line)
        chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      EXPECT_LE(chars, std::stoul(width)) << line;
    }
  }
  EXPECT_EQ(wrap_lines("no newline at the end of this text", 12),
            "no newline\n  at the end\n  of this\n  text");
}

}  // namespace
}  // namespace mmprof::report
