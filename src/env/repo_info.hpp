#pragma once
// The user's code: which commit of which repository the run measured (the git CLI, read-only).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>

namespace mmprof::env {

inline constexpr int kRepoLogLength = 20;

// {"path", "git": true, "head", "branch" (null when detached), "dirty", "dirty_files",
//  "log": [{"hash", "date" (ISO 8601 committer date), "subject"}] (newest first, at most 20)};
// or {"path", "git": false, "reason"} when `path` is not in a git work tree or git is missing.
// Never throws for those: a run outside a repository is normal.
nlohmann::json repo_info(const std::filesystem::path& path);

// `git log --format=%H%x1f%cI%x1f%s` output -> the "log" array (pure; unit separator 0x1f so a
// subject may hold any printable character).
nlohmann::json parse_git_log(std::string_view text);

}  // namespace mmprof::env
