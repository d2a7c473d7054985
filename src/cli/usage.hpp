#pragma once
// mmprof's one error style: "mmprof: error: <one sentence>", then where it helps "did you mean
// '<name>'?" and "see 'mmprof <command> --help'"; never CLI11's exception names or a help dump.
// Also the numeric checks of options, whose messages print their bounds compactly (CLI::Range
// prints them with std::to_string: --images -5 printed all 309 digits of the largest double).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace mmprof::cli {

// The lines to print on stderr: the sentence, then `hint` and `help_command` ("mmprof gen") as
// "see '<help_command> --help'", each only when not empty.
std::string error_text(const std::string& sentence, const std::string& hint,
                       const std::string& help_command);

// A CLI11 parse error of `app` (parsed from `args`, args[0] the program) in that style: an
// unknown command or option is named with the nearest known one.
std::string parse_error_text(const CLI::App& app, const CLI::ParseError& e,
                             const std::vector<std::string>& args);

// Checks of numeric options: a number >= min, > min, or in [lo, hi]; the option's own type is
// checked after them ("--images: must be >= 0, got -5", "--images: must be an integer, got 2.5").
CLI::Validator at_least(double min);
CLI::Validator above(double min);
CLI::Validator between(double lo, double hi);
// A path given as "" (`--data "$DATA"` with DATA unset) is refused by name ("--data: an empty
// path"), not taken for the option left out (which runs the embedded default dataset).
CLI::Validator non_empty_path();

}  // namespace mmprof::cli
