#pragma once
// Escaping for the report writers: every string that came from a file (sample keys, error
// messages, paths, knowledge-base text) goes through one of these.
#include <string>
#include <string_view>

namespace mmprof::report {

// & < > " ' as entities: safe in HTML text, attribute values and inline SVG.
std::string html_escape(std::string_view s);

// Markdown table/inline text: & < > as entities (quotes are harmless there), and | ` * _ [ ]
// backslash-escaped, newlines as spaces, so a file name cannot break a table or inject markup into
// a PR comment.
std::string md_escape(std::string_view s);

}  // namespace mmprof::report
