#include "rundir/run_writer.hpp"

#include <fmt/format.h>

#include "mmprof/error.hpp"
#include "rundir/resource_rows.hpp"
#include "rundir/tables.hpp"

namespace mmprof::rundir {
namespace {

namespace fs = std::filesystem;

// Creates `dir`; refuses a non-empty existing directory that is not a run directory, so a typo
// in --out never writes into someone's data.
const fs::path& prepared(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec) && !RunDir::is_run(dir)) {
    throw UsageError(fmt::format(
        "--out {} exists and is not an mmprof run directory; choose another path", dir.string()));
  }
  fs::create_directories(dir, ec);
  if (ec)
    throw InputError(fmt::format("cannot create run directory {}: {}", dir.string(), ec.message()));
  return dir;
}

}  // namespace

RunWriter::RunWriter(fs::path dir, bool getitem_column)
    : dir_(std::move(dir)),
      stages_schema_(getitem_column ? &stages_schema_with_getitem() : &stages_schema()),
      steps_(prepared(dir_) / run_file::steps, csv_header(steps_schema())),
      stages_(dir_ / run_file::stages, csv_header(*stages_schema_)),
      errors_(dir_ / run_file::errors, ""),
      digests_(dir_ / run_file::digests, csv_header(digests_schema())),
      resources_(dir_ / run_file::resources, csv_header(resources_schema())),
      host_(dir_ / run_file::host, csv_header(host_schema())) {}

void RunWriter::step(const StepRow& row) {
  row_.clear();
  append_csv_row(steps_schema(), row, row_);
  steps_.write(row_);
}

void RunWriter::stages(const std::vector<StageRow>& rows) {
  row_.clear();
  for (const StageRow& r : rows)
    append_csv_row(*stages_schema_, r, row_);
  stages_.write(row_);
}

void RunWriter::error(const nlohmann::json& line) {
  errors_.write(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void RunWriter::digest(const DigestRow& row) {
  row_.clear();
  append_csv_row(digests_schema(), row, row_);
  digests_.write(row_);
}

void RunWriter::resources(const Snapshot& snapshot) {
  sampler_row_.clear();
  for (const ResourceRow& r : resource_rows(snapshot))
    append_csv_row(resources_schema(), r, sampler_row_);
  resources_.write(sampler_row_);
  sampler_row_.clear();
  append_csv_row(host_schema(), host_row(snapshot), sampler_row_);
  host_.write(sampler_row_);
}

void RunWriter::manifest(const nlohmann::json& manifest) const {
  write_json_atomic(file(run_file::manifest), manifest);
}

nlohmann::json RunWriter::summary(const SummaryParts& parts) const {
  nlohmann::json s = summary_json(parts);
  write_json_atomic(file(run_file::summary), s);
  return s;
}

void RunWriter::steady(const nlohmann::json& steady) const {
  write_json_atomic(file(run_file::steady), steady);
}

}  // namespace mmprof::rundir
