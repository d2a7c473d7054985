#pragma once
// The report's two human formats, both pure functions of report.json (via layout_report):
// report.md fits a pull-request comment (no charts), report.html is one self-contained file
// with inline SVG charts and no scripts, fonts or external resources.
#include <nlohmann/json.hpp>
#include <string>

namespace mmprof::report {

std::string render_markdown(const nlohmann::json& report);
std::string render_html(const nlohmann::json& report);

}  // namespace mmprof::report
