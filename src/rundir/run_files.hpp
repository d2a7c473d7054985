#pragma once
// The run directory of docs/architecture.md: its only owner.
#include <filesystem>

namespace mmprof {

// Creates `dir` (and parents); refuses a non-empty existing directory that is not a run directory.
void prepare_run_dir(const std::filesystem::path& dir);

}  // namespace mmprof
