#include "rundir/run_writer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "mmprof/error.hpp"
#include "rundir/resource_rows.hpp"
#include "rundir/tables.hpp"

namespace mmprof::rundir {
namespace {

// Room for what a failed run still writes after the disk filled: summary.json and the manifest
// of a run are 10-60 kB each (a job's with many ranks more), written next to their old versions
// (temp + rename), plus the checkpoint.
constexpr off_t kReserveBytes = off_t{256} * 1024;

// Preallocates `path`; returns it, or an empty path when the filesystem cannot (it is full
// already, or has no fallocate): the run goes on without the reserve.
std::filesystem::path make_reserve(const std::filesystem::path& path) {
  const int fd = open_new_output(path);
  if (fd < 0) return {};
  const bool ok = ::posix_fallocate(fd, 0, kReserveBytes) == 0;
  ::close(fd);
  if (ok) return path;
  ::unlink(path.c_str());
  return {};
}

}  // namespace

RunWriter::RunWriter(std::filesystem::path dir, RunWriterOptions options)
    : out_(std::move(dir), OutputKind::run, options.force),
      dir_(out_.path()),
      stages_schema_(options.job ? &stages_schema_with_getitem() : &stages_schema()),
      steps_schema_(options.job ? &steps_schema_with_rank() : &steps_schema()),
      steps_(dir_ / run_file::steps, csv_header(*steps_schema_)),
      stages_(dir_ / run_file::stages, csv_header(*stages_schema_)),
      errors_(dir_ / run_file::errors, ""),
      digests_(dir_ / run_file::digests, csv_header(digests_schema())),
      resources_(dir_ / run_file::resources, csv_header(resources_schema())),
      host_(dir_ / run_file::host, csv_header(host_schema())),
      reserve_(make_reserve(dir_ / run_file::reserve)) {}

RunWriter::~RunWriter() {
  release_reserve();
}

void RunWriter::release_reserve() noexcept {
  // The run thread and the sampler's thread may both fail at once: unlink once.
  std::call_once(released_, [this] {
    if (!reserve_.empty()) ::unlink(reserve_.c_str());
  });
}

void RunWriter::append(AppendFile& file, std::string_view text) {
  {
    // Whichever thread failed first, the run's error is that failure (the other thread may be
    // the one that reports it).
    const std::lock_guard lock(failure_mutex_);
    if (!failure_.empty()) throw OutputError(failure_);
  }
  try {
    file.write(text);
  } catch (const OutputError& e) {
    {
      const std::lock_guard lock(failure_mutex_);
      if (failure_.empty()) failure_ = e.what();
    }
    release_reserve();
    throw;
  }
}

void RunWriter::step(const StepRow& row) {
  row_.clear();
  append_csv_row(*steps_schema_, row, row_);
  append(steps_, row_);
}

void RunWriter::stages(const std::vector<StageRow>& rows) {
  row_.clear();
  for (const StageRow& r : rows)
    append_csv_row(*stages_schema_, r, row_);
  append(stages_, row_);
}

void RunWriter::error(const nlohmann::json& line) {
  append(errors_, line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void RunWriter::digest(const DigestRow& row) {
  row_.clear();
  append_csv_row(digests_schema(), row, row_);
  append(digests_, row_);
}

void RunWriter::resources(const Snapshot& snapshot) {
  sampler_row_.clear();
  for (const ResourceRow& r : resource_rows(snapshot))
    append_csv_row(resources_schema(), r, sampler_row_);
  append(resources_, sampler_row_);
  sampler_row_.clear();
  append_csv_row(host_schema(), host_row(snapshot), sampler_row_);
  append(host_, sampler_row_);
}

void RunWriter::manifest(const nlohmann::json& manifest) const {
  write_json_atomic(file(run_file::manifest), manifest);
}

void RunWriter::summary(const Summary& summary) const {
  write_json_atomic(file(run_file::summary), to_json(summary));
}

void RunWriter::steady(const nlohmann::json& steady) const {
  write_json_atomic(file(run_file::steady), steady);
}

}  // namespace mmprof::rundir
