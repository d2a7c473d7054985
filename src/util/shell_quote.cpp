#include "util/shell_quote.hpp"

namespace mmprof {

std::string shell_quote(std::string_view s) {
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "'" + std::string.
  std::string out(1, '\'');
  for (const char c : s) {
    if (c == '\'') {
      out.append("'\\''");
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

std::string shell_word(std::string_view s) {
  constexpr std::string_view plain =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=,:+-$";
  if (!s.empty() && s.find_first_not_of(plain) == std::string_view::npos) return std::string(s);
  return shell_quote(s);
}

}  // namespace mmprof
