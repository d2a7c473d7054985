#pragma once
// summary.json's typed parts beside the headline figures (mmprof/summary_resources.hpp): their
// JSON form, written and read in one place each (summary.cpp calls them for its keys).
#include <nlohmann/json.hpp>
#include <string>

#include "mmprof/summary_loading.hpp"
#include "mmprof/summary_resources.hpp"
#include "rundir/figure_reader.hpp"

namespace mmprof::rundir {

// A distribution, with its p999 or not.
nlohmann::json spread_json(const TimeSpread& d, bool with_p999);
TimeSpread spread_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);

nlohmann::json to_json(const MemoryPeaks& m);
nlohmann::json to_json(const CpuUse& c);
nlohmann::json to_json(const IoUse& io);
nlohmann::json to_json(const ErrorTally& e);
nlohmann::json to_json(const GpuFigures& g);
nlohmann::json to_json(const Locality& l);
nlohmann::json to_json(const ShuffleFigures& s);
nlohmann::json to_json(const ReadPattern& p);
nlohmann::json to_json(const Reliability& x);
nlohmann::json to_json(const ResumeRecord& x);
nlohmann::json to_json(const EpochBoundaryFigures& e);
nlohmann::json to_json(const TraceFigures& t);

// Each reads the part `j` found at `at` (its key, for the error naming a figure of a wrong type).
MemoryPeaks memory_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
CpuUse cpu_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
IoUse io_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
ErrorTally errors_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
GpuFigures gpu_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
Locality locality_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
ShuffleFigures shuffle_from_json(const FigureReader& r, const nlohmann::json& j,
                                 const std::string& at);
ReadPattern read_pattern_from_json(const FigureReader& r, const nlohmann::json& j,
                                   const std::string& at);
Reliability reliability_from_json(const FigureReader& r, const nlohmann::json& j,
                                  const std::string& at);
ResumeRecord resume_from_json(const FigureReader& r, const nlohmann::json& j,
                              const std::string& at);
EpochBoundaryFigures epoch_boundary_from_json(const FigureReader& r, const nlohmann::json& j,
                                              const std::string& at);
TraceFigures trace_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);

}  // namespace mmprof::rundir
