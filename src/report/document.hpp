#pragma once
// The report's layout, independent of the output format: sections of paragraphs, tables, code
// lines, links and charts, all holding raw (unescaped) text. layout_report() decides what is
// shown; the Markdown and HTML writers only decide how (and escape everything).
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

namespace mmprof::report {

struct Paragraph {
  std::string text;
  bool strong = false;
};
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
struct CodeLines {
  std::vector<std::string> lines;  // shell commands, one per line
};
struct Link {
  std::string title, url, note;
};
struct Links {
  std::vector<Link> links;
};
// A chart the HTML writer draws (Markdown skips it): kind is "stages", "cdf", "memory", "arms"
// or "ranks"; data is the chart's series from report.json.
struct Chart {
  std::string kind, title;
  nlohmann::json data;
  std::string note;  // how to read it, under the chart
};
using Block = std::variant<Paragraph, Table, CodeLines, Links, Chart>;

struct Section {
  int level = 2;  // heading level (1 = the report's title)
  std::string title;
  std::vector<Block> blocks;
};

// "12.3", or "n/a" for null / not a number.
std::string format_number(const nlohmann::json& v, int decimals = 1);
// A figure of any size as a table shows it: a whole number without decimals (bytes: 27095948,
// not 27095948.0000), else 2 decimals from 100 up and 4 below (0.3438); "n/a" for a non-number.
std::string format_figure(const nlohmann::json& v);

std::vector<Section> layout_report(const nlohmann::json& report);

}  // namespace mmprof::report
