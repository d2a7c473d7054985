#pragma once
// The experiment directory's tables: matrix.csv and matrix.md are pure functions of
// experiment.json's content (docs/experiment.md), so they always agree with it.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace mmprof {

std::string matrix_csv(const nlohmann::json& experiment);
std::string matrix_md(const nlohmann::json& experiment);

// Writes experiment.json, matrix.csv and matrix.md into `dir`, each atomically.
void write_experiment_files(const std::filesystem::path& dir, const nlohmann::json& experiment);

}  // namespace mmprof
