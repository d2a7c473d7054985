#pragma once
// The experiment directory's tables: matrix.csv and matrix.md are pure functions of
// experiment.json's content (docs/experiment.md), so they always agree with it.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace mmprof {

std::string matrix_csv(const nlohmann::json& experiment);
std::string matrix_md(const nlohmann::json& experiment);
// What `mmprof ab` prints on a terminal (matrix.md holds the whole table): a line per arm with
// its median, hyperfine's "1.12 ± 0.04 × faster than base" (the 95 % interval's half-width) and
// its verdict with the reason; for an INCONCLUSIVE one, what would decide it (inconclusive_next).
std::string ab_terminal(const nlohmann::json& experiment);
// An undecided arm's next step, from its interval and the band tau (both %, n rounds): the rounds
// that would narrow the interval to a verdict if the estimate holds (intervals narrow as
// 1/sqrt(n)), or that the estimate lies inside the band, so more rounds can show no change at best.
std::string inconclusive_next(double effect_pct, double ci_lo_pct, double ci_hi_pct, double tau_pct,
                              int64_t n);

// Writes experiment.json, matrix.csv and matrix.md into `dir`, each atomically.
void write_experiment_files(const std::filesystem::path& dir, const nlohmann::json& experiment);

}  // namespace mmprof
