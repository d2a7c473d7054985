#pragma once
// POSIX shell quoting, for command lines mmprof prints for people to paste (report hypotheses)
// and runs through /bin/sh (tests).
#include <string>
#include <string_view>

namespace mmprof {

// `s` in single quotes, with each ' written as '\''; safe for any bytes but NUL.
std::string shell_quote(std::string_view s);

// `s` itself when it holds only characters no shell treats specially, else shell_quote(s).
std::string shell_word(std::string_view s);

}  // namespace mmprof
