#include "env/repo_info.hpp"

#include <fmt/format.h>

#include "env/command_capture.hpp"

namespace mmprof::env {
namespace {

using nlohmann::json;

std::string chomp(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
    s.pop_back();
  return s;
}

// git -C <path> <args...>. GIT_OPTIONAL_LOCKS=0: `git status` would otherwise refresh and write
// the user's index (taking index.lock) — an inventory must not modify what it inspects.
CaptureResult git(const std::filesystem::path& path, std::vector<std::string> args) {
  std::vector<std::string> argv = {"git", "-C", path.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return capture_command(argv, {"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"});
}

json not_a_repo(const std::filesystem::path& path, const std::string& reason) {
  return {{"path", path.string()}, {"git", false}, {"reason", reason}};
}

}  // namespace

json parse_git_log(std::string_view text) {
  json log = json::array();
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const auto a = line.find('\x1f');
    const auto b = a == std::string_view::npos ? a : line.find('\x1f', a + 1);
    if (b == std::string_view::npos) continue;
    log.push_back({{"hash", std::string(line.substr(0, a))},
                   {"date", std::string(line.substr(a + 1, b - a - 1))},
                   {"subject", std::string(line.substr(b + 1))}});
  }
  return log;
}

json repo_info(const std::filesystem::path& path) {
  const auto top = git(path, {"rev-parse", "--show-toplevel"});
  if (!top.started) return not_a_repo(path, "git is not installed (" + top.error + ")");
  if (top.exit_code != 0) {
    return not_a_repo(path, top.error.empty() ? "not a git repository" : top.error);
  }
  json r = {{"path", path.string()}, {"git", true}, {"toplevel", chomp(top.out)}};
  const auto head = git(path, {"rev-parse", "--verify", "--quiet", "HEAD"});
  r["head"] = head.exit_code == 0 ? json(chomp(head.out)) : json();
  if (head.exit_code != 0) r["head_reason"] = "no commits yet";
  const auto branch = git(path, {"symbolic-ref", "--quiet", "--short", "HEAD"});
  r["branch"] = branch.exit_code == 0 ? json(chomp(branch.out)) : json();  // null: detached
  // Untracked files count: a new, uncommitted module changes what runs as much as an edit.
  const auto status = git(path, {"status", "--porcelain"});
  if (status.exit_code == 0) {
    int files = 0;
    for (const char c : status.out)
      files += c == '\n';
    r["dirty"] = files > 0;
    r["dirty_files"] = files;
  } else {
    r["dirty"] = nullptr;
    r["dirty_files"] = nullptr;
  }
  json log = json::array();
  if (head.exit_code == 0) {
    const auto out = git(path, {"log", fmt::format("-n{}", kRepoLogLength), "--no-color",
                                "--format=%H%x1f%cI%x1f%s"});
    if (out.exit_code == 0) log = parse_git_log(out.out);
  }
  r["log"] = std::move(log);
  return r;
}

}  // namespace mmprof::env
