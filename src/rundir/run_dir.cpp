// RunDir: the typed reader of mmprof/run_dir.hpp.
#include "mmprof/run_dir.hpp"

#include <fmt/format.h>

#include <sstream>

#include "mmprof/error.hpp"
#include "rundir/json_file.hpp"
#include "rundir/tables.hpp"
#include "util/files.hpp"

namespace mmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

}  // namespace

bool RunDir::is_run(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / run_file::manifest, ec);
}

RunDir RunDir::open(const fs::path& dir) {
  RunDir r;
  r.dir_ = dir;
  r.manifest_ = rundir::read_json_object(
      dir / run_file::manifest,
      fmt::format("{} is not a run directory written by mmprof", dir.string()));
  rundir::check_schema(r.manifest_, run_schema::manifest, dir / run_file::manifest);
  std::error_code ec;
  if (fs::exists(dir / run_file::summary, ec)) {
    json summary = rundir::read_json_object(dir / run_file::summary, "");
    rundir::check_schema(summary, run_schema::summary, dir / run_file::summary);
    r.summary_ = summary_from_json(summary, dir / run_file::summary);
  }
  return r;
}

const Summary& RunDir::summary() const {
  if (!summary_) {
    throw InputError(fmt::format("{} is missing: the run stopped before it wrote one",
                                 file(run_file::summary).string()));
  }
  return *summary_;
}

std::vector<StepRow> RunDir::steps() const {
  return rundir::read_rows(file(run_file::steps), rundir::steps_schema_with_rank());
}

std::vector<StageRow> RunDir::stages() const {
  return rundir::read_rows(file(run_file::stages), rundir::stages_read_schema());
}

void RunDir::for_each_stage(const std::function<void(const StageRow&)>& fn) const {
  rundir::for_each_row(file(run_file::stages), rundir::stages_read_schema(), fn);
}

std::optional<std::vector<ResourceRow>> RunDir::resources() const {
  std::error_code ec;
  if (!fs::exists(file(run_file::resources), ec)) return std::nullopt;
  return rundir::read_rows(file(run_file::resources), rundir::resources_schema());
}

std::optional<std::vector<HostRow>> RunDir::host() const {
  std::error_code ec;
  if (!fs::exists(file(run_file::host), ec)) return std::nullopt;
  return rundir::read_rows(file(run_file::host), rundir::host_schema());
}

std::vector<json> RunDir::errors() const {
  std::vector<json> lines;
  const fs::path path = file(run_file::errors);
  std::error_code ec;
  if (!fs::exists(path, ec)) return lines;
  std::istringstream in(read_input_file(path, "run file", rundir::kMaxRunFileBytes));
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      throw InputError(fmt::format("{} line {} is not valid JSON", path.string(), number));
    }
    lines.push_back(std::move(j));
  }
  return lines;
}

DigestMap RunDir::digests() const {
  DigestMap out;
  std::error_code ec;
  if (!fs::exists(file(run_file::digests), ec)) return out;
  rundir::for_each_row(file(run_file::digests), rundir::digests_schema(), [&](const DigestRow& d) {
    out[{d.phase, d.batch_id}] = d.digest;
  });
  return out;
}

std::optional<json> RunDir::steady() const {
  return rundir::read_json_if_present(file(run_file::steady));
}

std::optional<json> RunDir::checkpoint() const {
  return rundir::read_json_if_present(file(run_file::checkpoint));
}

}  // namespace mmprof
