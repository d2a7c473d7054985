#include "cli/usage.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <functional>

#include "util/did_you_mean.hpp"

namespace mmprof::cli {
namespace {

constexpr size_t kNone = std::string::npos;

// CLI11's messages as sentences of ours: "At least 2 required" -> "at least 2 required", also
// after an option's name ("--compare: At least ...").
std::string lower_first(std::string s) {
  const size_t named = s.rfind('-', 0) == 0 ? s.find(": ") : kNone;
  const size_t at = named == kNone ? 0 : named + 2;
  if (at < s.size()) s[at] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[at])));
  return s;
}

// The subcommand named `name`, or null (CLI::App::get_subcommand throws instead).
const CLI::App* subcommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_name() == name) return sub;
  return nullptr;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> long_option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames())
      names.push_back("--" + l);
  }
  return names;
}

// The index of the word naming the subcommand (the first that is not an option: the top level's
// --help and --version take no value), or kNone.
size_t command_index(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i].empty() || args[i][0] != '-') return i;
  }
  return kNone;
}

// The first option word of args[from, to) that `app` does not know ("--imags" of "--imags=3"),
// or "". Words after "--" are a job's command; a negative number is a value (--images -5).
std::string unknown_option(const CLI::App& app, const std::vector<std::string>& args, size_t from,
                           size_t to) {
  for (size_t i = from; i < to && i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (a.size() < 2 || a[0] != '-' || std::isdigit(static_cast<unsigned char>(a[1])) != 0 ||
        a[1] == '.')
      continue;
    // "-ofile" is -o with its value attached.
    std::string name = a[1] == '-' ? a.substr(0, a.find('=')) : a.substr(0, 2);
    if (app.get_option_no_throw(name) == nullptr) return name;
  }
  return "";
}

// CLI11's "Could not convert: --images = 2.5" as "--images must be an integer, got 2.5".
std::string conversion_sentence(const CLI::App& app, const std::string& what) {
  const std::string prefix = "Could not convert: ";
  const size_t eq = what.find(" = ");
  if (what.rfind(prefix, 0) != 0 || eq == kNone) return lower_first(what);
  const std::string name = what.substr(prefix.size(), eq - prefix.size());
  const CLI::Option* opt = app.get_option_no_throw(name);
  // The type name is followed by the checks' descriptions: "INT:>= 0".
  const std::string full = opt != nullptr ? opt->get_type_name() : "";
  const std::string type = full.substr(0, full.find(':'));
  const std::string kind = type == "INT"     ? "an integer"
                           : type == "UINT"  ? "a non-negative integer"
                           : type == "FLOAT" ? "a number"
                                             : "a valid value";
  return fmt::format("{} must be {}, got {}", name, kind, what.substr(eq + 3));
}

CLI::Validator bound_check(std::function<bool(double)> ok, const std::string& rule) {
  return CLI::Validator(
      [ok = std::move(ok), rule](std::string& input) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(input, v))
          return fmt::format("must be a number {}, got '{}'", rule, input);
        return ok(v) ? "" : fmt::format("must be {}, got {}", rule, input);
      },
      rule);
}

}  // namespace

std::string error_text(const std::string& sentence, const std::string& hint,
                       const std::string& help_command) {
  std::string out = "mmprof: error: " + sentence + "\n";
  if (!hint.empty()) out += hint + "\n";
  if (!help_command.empty()) out += "see '" + help_command + " --help'\n";
  return out;
}

std::string parse_error_text(const CLI::App& app, const CLI::ParseError& e,
                             const std::vector<std::string>& args) {
  const size_t at = command_index(args);
  const std::string top = unknown_option(app, args, 1, at);
  if (!top.empty()) {
    return error_text(fmt::format("mmprof has no option '{}'", top),
                      did_you_mean(top, long_option_names(app)), "mmprof");
  }
  const auto names = subcommand_names(app);
  if (at == kNone) {
    return error_text(fmt::format("a command is required: {}", fmt::join(names, ", ")), "",
                      "mmprof");
  }
  const CLI::App* sub = subcommand(app, args[at]);
  if (sub == nullptr) {
    return error_text(fmt::format("unknown command '{}'", args[at]), did_you_mean(args[at], names),
                      "mmprof");
  }
  const std::string path = "mmprof " + sub->get_name();
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    const std::string option = unknown_option(*sub, args, at + 1, args.size());
    if (!option.empty()) {
      std::string hint = did_you_mean(option, long_option_names(*sub));
      // `mmprof baseline python train.py --epochs 3`: the job's own options need the `--`.
      const bool no_separator = std::find(args.begin(), args.end(), "--") == args.end();
      if (hint.empty() && no_separator && sub->get_option_no_throw("command") != nullptr) {
        hint = fmt::format(
            "if {} is the job's, the job goes after --: {} [OPTIONS] -- python train.py {} ...",
            option, path, option);
      }
      return error_text(fmt::format("{} has no option '{}'", path, option), hint, path);
    }
  }
  const bool conversion = dynamic_cast<const CLI::ConversionError*>(&e) != nullptr;
  return error_text(conversion ? conversion_sentence(*sub, e.what()) : lower_first(e.what()), "",
                    path);
}

CLI::Validator at_least(double min) {
  return bound_check([min](double v) { return v >= min; }, fmt::format(">= {:g}", min));
}

CLI::Validator above(double min) {
  return bound_check([min](double v) { return v > min; }, fmt::format("> {:g}", min));
}

CLI::Validator non_empty_path() {
  return {[](const std::string& v) {
            return v.empty() ? std::string(
                                   "an empty path (an unset variable?); give a path, or "
                                   "leave the option out")
                             : std::string();
          },
          ""};
}

CLI::Validator between(double lo, double hi) {
  return bound_check([lo, hi](double v) { return v >= lo && v <= hi; },
                     fmt::format("in [{:g}, {:g}]", lo, hi));
}

}  // namespace mmprof::cli
