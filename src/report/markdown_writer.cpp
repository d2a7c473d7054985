#include <fmt/format.h>

#include "report/document.hpp"
#include "report/text_escape.hpp"
#include "report/writers.hpp"

namespace mmprof::report {
namespace {

struct MarkdownBlock {
  std::string& out;

  // Appends piece by piece: GCC 12 at -O3 warns falsely (-Wrestrict) on "literal" + string.
  void operator()(const Paragraph& p) const {
    const char* mark = p.strong ? "**" : "";
    out.append(mark).append(md_escape(p.text)).append(mark).append("\n\n");
  }
  void operator()(const Table& t) const {
    std::string rule = "|";
    out += "|";
    for (const auto& h : t.header) {
      out.append(" ").append(md_escape(h)).append(" |");
      rule += "---|";
    }
    out.append("\n").append(rule).append("\n");
    for (const auto& row : t.rows) {
      out += "|";
      for (const auto& cell : row)
        out.append(" ").append(md_escape(cell)).append(" |");
      out += "\n";
    }
    out += "\n";
  }
  void operator()(const CodeLines& c) const {
    // Inside a fence nothing is interpreted; a fence in the text itself cannot occur in a
    // command line we build, but is neutralised anyway.
    out += "```sh\n";
    for (const auto& l : c.lines) {
      std::string safe = l;
      for (size_t at; (at = safe.find("```")) != std::string::npos;)
        safe.replace(at, 3, "'''");
      out += safe + "\n";
    }
    out += "```\n\n";
  }
  void operator()(const Links& l) const {
    for (const auto& link : l.links) {
      out += fmt::format("- [{}](<{}>) ({})\n", md_escape(link.title), html_escape(link.url),
                         md_escape(link.note));
    }
    out += "\n";
  }
  void operator()(const Chart&) const {}  // charts live in report.html
};

}  // namespace

std::string render_markdown(const nlohmann::json& report) {
  std::string out;
  for (const auto& section : layout_report(report)) {
    out += std::string(static_cast<size_t>(section.level), '#') + " " + md_escape(section.title) +
           "\n\n";
    for (const auto& block : section.blocks)
      std::visit(MarkdownBlock{out}, block);
  }
  out += "_Charts: report.html. Machine-readable: report.json._\n";
  return out;
}

}  // namespace mmprof::report
