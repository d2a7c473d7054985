#pragma once
// summary.json's typed parts beside the headline figures (mmprof/summary_resources.hpp): their
// JSON form, written and read in one place each (summary.cpp calls them for its keys).
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "mmprof/summary_job.hpp"
#include "mmprof/summary_loading.hpp"
#include "mmprof/summary_resources.hpp"
#include "rundir/figure_reader.hpp"

namespace mmprof::rundir {

// A distribution, with its p999 or not.
nlohmann::json spread_json(const TimeSpread& d, bool with_p999);
TimeSpread spread_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
// Distributions by name (stages, transforms), without p999; read from the object `j` (none when
// it is no object).
nlohmann::json spreads_json(const std::map<std::string, TimeSpread, std::less<>>& spreads);
std::map<std::string, TimeSpread, std::less<>> spreads_from_json(const FigureReader& r,
                                                                 const nlohmann::json& j,
                                                                 const std::string& at);

// Each part's JSON, and the part read from `j` found at `at` (its key, for the error naming a
// figure of a wrong type).
// - the resources (mmprof/summary_resources.hpp), summary_parts.cpp:
nlohmann::json to_json(const MemoryPeaks& m);
MemoryPeaks memory_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
nlohmann::json to_json(const CpuUse& c);
CpuUse cpu_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
nlohmann::json to_json(const IoUse& io);
IoUse io_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
// - the GPU's and the failed samples:
nlohmann::json to_json(const GpuFigures& g);
GpuFigures gpu_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
nlohmann::json to_json(const ErrorTally& e);
ErrorTally errors_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
// - how the data was loaded (mmprof/summary_loading.hpp), summary_loading.cpp:
nlohmann::json to_json(const Locality& l);
Locality locality_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
nlohmann::json to_json(const ShuffleFigures& s);
ShuffleFigures shuffle_from_json(const FigureReader& r, const nlohmann::json& j,
                                 const std::string& at);
nlohmann::json to_json(const ReadPattern& p);
ReadPattern read_pattern_from_json(const FigureReader& r, const nlohmann::json& j,
                                   const std::string& at);
// - what the loader survived, and where a resumed run started:
nlohmann::json to_json(const Reliability& x);
Reliability reliability_from_json(const FigureReader& r, const nlohmann::json& j,
                                  const std::string& at);
nlohmann::json to_json(const ResumeRecord& x);
ResumeRecord resume_from_json(const FigureReader& r, const nlohmann::json& j,
                              const std::string& at);
// - a rank of a multi-rank run; where decode ran, the first batches of the epochs, the trace:
nlohmann::json to_json(const DistRank& d);
DistRank dist_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
nlohmann::json to_json(const DecodePlacement& d);
DecodePlacement decode_placement_from_json(const FigureReader& r, const nlohmann::json& j,
                                           const std::string& at);
nlohmann::json to_json(const EpochBoundaryFigures& e);
EpochBoundaryFigures epoch_boundary_from_json(const FigureReader& r, const nlohmann::json& j,
                                              const std::string& at);
// - mmprof's loader's samples by class, and its workers' load (a job rank's workers too):
nlohmann::json to_json(const StageBreakdownFigures& b);
StageBreakdownFigures stage_breakdown_from_json(const FigureReader& r, const nlohmann::json& j,
                                                const std::string& at);
nlohmann::json to_json(const WorkerBalance& w);
WorkerBalance worker_balance_from_json(const FigureReader& r, const nlohmann::json& j,
                                       const std::string& at);
// - a user's job (mmprof/summary_job.hpp), summary_job.cpp; its DataLoaders as the manifest
//   holds them too:
nlohmann::json to_json(const JobFigures& j);
JobFigures job_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);
nlohmann::json to_json(const JobDataLoaders& d);
nlohmann::json to_json(const RankComparison& c);
JobDataLoaders dataloaders_from_json(const FigureReader& r, const nlohmann::json& j,
                                     const std::string& at);
nlohmann::json to_json(const TraceFigures& t);
TraceFigures trace_from_json(const FigureReader& r, const nlohmann::json& j, const std::string& at);

}  // namespace mmprof::rundir
