#include "external/external_run.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "env/network.hpp"
#include "external/cow_growth.hpp"
#include "external/hook_env.hpp"
#include "external/hook_records.hpp"
#include "external/job_config.hpp"
#include "external/job_process.hpp"
#include "external/job_stop.hpp"
#include "external/job_timeline.hpp"
#include "external/job_trace.hpp"
#include "external/optimizer_steps.hpp"
#include "gpu/gpu_events_file.hpp"
#include "measure/gpu_block.hpp"
#include "measure/manifest.hpp"
#include "measure/progress.hpp"
#include "measure/resource_summary.hpp"
#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"
#include "probe/clock.hpp"
#include "probe/procfs.hpp"
#include "probe/resource_sampler.hpp"
#include "rundir/json_values.hpp"
#include "rundir/run_writer.hpp"
#include "rundir/summary.hpp"
#include "rundir/summary_parts.hpp"
#include "util/interrupt.hpp"

namespace mmprof::external {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using rundir::nullable;
using namespace std::chrono_literals;

constexpr auto kPollPeriod = 50ms;
// The hook flushes at most every 200 ms: reading its files more often finds nothing new.
constexpr int64_t kTailPeriodNs = 200'000'000;
constexpr const char* kPhase = "end_to_end";

// The first 64 bits of the hook's content digest (hex), as digests.csv holds digests.
std::optional<uint64_t> digest64(const std::optional<std::string>& hex) {
  if (!hex || hex->size() < 16) return std::nullopt;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(hex->data(), hex->data() + 16, v, 16);
  if (ec != std::errc() || end != hex->data() + 16) return std::nullopt;
  return v;
}

class ExternalRun {
 public:
  explicit ExternalRun(const ExternalRunOptions& o)
      : o_(o),
        writer_(o.out, {.force = o.force, .job = true}),
        hook_dir_(o.out / run_file::hook),
        stop_file_(o.out / run_file::hook / "stop"),
        tail_(o.out / run_file::hook),
        sampler_(procfs_, clock_, {o.config.metrics.interval_ms, ::getpid(), 0.005, kObserverRole},
                 [this](const Snapshot& s) { writer_.resources(s); }),
        progress_(o.progress, [this] { return clock_.now_ns(); }) {}

  Summary run() {
    start_.network_at_start = env::network_counters();
    write_manifest(false);
    sampler_.start();
    sampler_.set_phase("warmup");
    try {
      launch();
      monitor();
    } catch (...) {
      // mmprof itself failed while observing (a disk error): the job goes too, files stay.
      if (job_) job_->kill_leftovers();
      sampler_.stop();
      throw;
    }
    leftovers_ = job_->kill_leftovers();
    output_->drain(true);  // every writer is gone now
    sampler_.set_phase("done");
    sampler_.stop();
    progress_.finish();
    Summary summary = finish();
    write_manifest(true);
    if (status_ == "interrupted") {
      throw Error(ExitCode::interrupted,
                  "interrupted: the job was stopped, its run directory kept");
    }
    if (status_ == "failed") throw RunError(message_);
    return summary;
  }

 private:
  void launch() {
    HookSettings hook;
    hook.dir = hook_dir_;
    if (o_.steps) hook.max_batches = o_.warmup_steps + *o_.steps;
    hook.stop_file = stop_file_;
    hook.loader = o_.loader;
    hook.overrides = o_.overrides;
    hook.digest_batches = std::min<int64_t>(kDigestBatches, o_.warmup_steps);
    fs::create_directories(hook_dir_);
    fs::create_directories(o_.out / run_file::gpu);
    auto env = job_environment(hook, o_.out / run_file::gpu / "events-%p.jsonl", unavailable_);
    // Its prints reach the log and the terminal as it makes them, not when a pipe's buffer fills
    // (Python buffers a pipe; a terminal it writes line by line). The job's own setting stands.
    if (std::getenv("PYTHONUNBUFFERED") == nullptr) env.emplace_back("PYTHONUNBUFFERED", "1");
    env.insert(env.end(), o_.env.begin(), o_.env.end());
    output_ = std::make_unique<JobOutput>(o_.out / run_file::job_log, [this](const std::string& l) {
      if (o_.show_job_output) progress_.print_above(l);
    });
    stop_.emplace(o_.grace_s, o_.duration_s, clock_.now_ns());
    job_ = std::make_unique<JobProcess>(o_.command, env, output_.get());
    // mmprof's guard of the job is mmprof's, not the job's: no figure of the job counts it.
    if (job_->guard_pid() > 0) {
      sampler_.set_role(job_->guard_pid(), {kObserverRole, -1, {}});
    } else {
      unavailable_.push_back(
          "guard: unavailable: /bin/sh could not be started beside the job, which then outlives "
          "an mmprof killed by SIGKILL");
    }
    sampler_.sample_now("job_started");
  }

  // Until the job ends: name its processes, find the end of warm-up, stop it when asked.
  void monitor() {
    int64_t last_tail = 0;
    while (!job_->poll()) {
      output_->drain();
      const int64_t now = clock_.now_ns();
      if (now - last_tail >= kTailPeriodNs) {
        last_tail = now;
        follow_hook();
      }
      act(stop_->poll(now, stop_inputs()));
      std::this_thread::sleep_for(kPollPeriod);
    }
    exit_ = *job_->poll();
    follow_hook();
    stop_->job_exited(stop_inputs());
  }

  void follow_hook() {
    tail_.poll(records_);
    bool new_worker = false;
    for (; labelled_ < records_.procs.size(); ++labelled_) {
      const int pid = records_.procs[labelled_].pid;
      if (const auto id = identify(records_, pid)) {
        sampler_.set_role(pid,
                          {id->worker ? "worker" : "main", id->worker_id.value_or(-1), id->rank});
        if (id->rank && pid != job_->pid()) ranked_ = true;
        new_worker = new_worker || id->worker;
      }
    }
    // A worker of a short epoch may end before the periodic samples' smaps budget reaches it:
    // one full sample as its workers start gives each of them a PSS reading.
    if (new_worker) sampler_.sample_now("workers_named");
    // torchrun (or another launcher) is the job's root; its ranks are the hook's main processes.
    if (ranked_ && !identify(records_, job_->pid()))
      sampler_.set_role(job_->pid(), {"agent", -1, {}});
    for (const BatchRecord& b : records_.batches) {
      if (b.n + 1 > batches_seen_) batches_seen_ = b.n + 1;
      if (!measured_since_ && b.n == o_.warmup_steps) {
        measured_since_ = b.call_ns;
        sampler_.set_phase(kPhase);
        sampler_.begin_window(kPhase);
      }
    }
    // A stuck worker is said at once: the job may wait for it for ever.
    for (; stuck_told_ < records_.stuck.size(); ++stuck_told_) {
      if (o_.show_job_output) {
        progress_.print_above(
            fmt::format("mmprof: warning: {}: the job waits for it (DataLoader's timeout is "
                        "off); Ctrl-C stops the job and keeps what was measured\n",
                        records_.stuck[stuck_told_].text()));
      }
    }
    // The warm-up's batches first (a job can take many seconds to its first batch), then the
    // measured steps with their rate and ETA.
    if (!warmup_shown_ && o_.warmup_steps > 0) {
      progress_.update("warm-up", std::min(batches_seen_, o_.warmup_steps), o_.warmup_steps, 0,
                       "batches");
      warmup_shown_ = batches_seen_ >= o_.warmup_steps;
    } else if (o_.steps) {
      progress_.update("job", std::max<int64_t>(0, batches_seen_ - o_.warmup_steps), *o_.steps, 0);
    }
  }

  StopInputs stop_inputs() const {
    return {interrupted(), !records_.procs.empty(), !records_.stops.empty(), measured_since_};
  }

  void act(const StopActions& a) {
    if (a.write_stop_file) std::ofstream(stop_file_) << "mmprof --duration\n";
    if (a.signal_group) job_->signal_group(SIGINT);
    if (a.kill) leftovers_ = job_->kill_leftovers();
  }

  void write_manifest(bool end) {
    RunFacts facts;
    facts.network_at_start = start_.network_at_start;
    facts.end_of_run = end;
    json m = provenance_manifest(o_.argv, job_config_tree(o_.config_tree, description_), o_.repo,
                                 nullptr, facts);
    m["source"] = "external";
    if (!dataset_.data.is_null()) m["data"] = dataset_.data;
    if (!dataset_.data_mix.is_null()) m["data_mix"] = dataset_.data_mix;
    if (!dataset_.data_reason.empty()) m["data_reason"] = dataset_.data_reason;
    m["job"] = {{"command", o_.command},
                {"env", json::object()},
                {"overrides", o_.overrides},
                {"warmup_steps", o_.warmup_steps},
                {"steps", o_.steps ? json(*o_.steps) : json(nullptr)},
                {"duration_s", nullable(o_.duration_s)},
                {"loader", o_.loader.empty() ? json(nullptr) : json(o_.loader)}};
    for (const auto& [k, v] : o_.env)
      m["job"]["env"][k] = v;
    if (end) m["job"]["dataloader"] = description_;
    m["baseline_spec"] = spec_;
    writer_.manifest(m);
  }

  // The job's exit as mmprof judges it: stopped by mmprof (steps, duration), ended by itself,
  // failed, or interrupted by the user.
  void judge_exit() {
    if (stop_->reason() == StopReason::interrupt) {
      status_ = "interrupted";
      message_ = "interrupted (Ctrl-C or SIGTERM forwarded to the job)";
    } else if (stop_->reason() == StopReason::hook_steps ||
               stop_->reason() == StopReason::duration || exit_.exit_code == 0) {
      status_ = "complete";  // stopped by mmprof as asked, or ended by itself
    } else {
      status_ = "failed";
      message_ = fmt::format("the job ({}) ended with {} before mmprof stopped it",
                             o_.command.front(), exit_.describe());
      if (const auto e = job_exception(records_))
        message_ += fmt::format(": it raised {}", e->text());
    }
  }

  Summary finish() {
    tail_.finish(records_);
    judge_exit();
    TimelineOptions t;
    t.loader = o_.loader;
    t.warmup_steps = o_.warmup_steps;
    t.max_steps = o_.steps;
    const JobTimeline timeline = job_timeline(records_, t);
    const JobDescription job = describe_job(records_, timeline.loaders);
    description_ = rundir::to_json(job.figures());
    dataset_ = job_dataset(description_);  // after the job: its probe warms no cache the job reads
    write_rows(timeline);
    Summary parts;
    parts.source = "external";
    parts.status = status_;
    parts.message = message_;
    const RankTimeline* primary = timeline.primary();
    figures(parts, primary);
    const ResourceUsage usage = sampler_.usage();
    add_resource_parts(parts, usage, {{kPhase, primary != nullptr ? primary->samples : 0}}, kPhase);
    name_workers(parts.memory);
    const GpuTraceResult gpu_trace = read_gpu_trace();
    gpu_part(parts, primary, gpu_trace);
    if (o_.trace) parts.trace = trace_part(timeline, gpu_trace);
    if (primary != nullptr) parts.epoch_boundary = primary->epoch_boundary.figures();
    parts.job = job_part(timeline, job, primary);
    spec_ = job_spec(job, primary);
    writer_.summary(parts);
    return parts;
  }

  void write_rows(const JobTimeline& timeline) {
    for (const RankTimeline& r : timeline.ranks) {
      for (const StepRow& s : r.steps)
        writer_.step(s);
      writer_.stages(r.stages);
    }
    const RankTimeline* primary = timeline.primary();
    if (primary == nullptr || !primary->loader) return;
    for (const BatchRecord& b : records_.batches) {
      if (b.pid != primary->pid || b.loader != *primary->loader) continue;
      if (const auto d = digest64(b.digest))
        writer_.digest({kPhase, static_cast<uint64_t>(b.n), b.epoch, *d});
    }
  }

  // The standard figures of summary.json for the job: its own loop is the end-to-end phase;
  // mmprof runs neither its pipeline nor its step alone, so those are null with the reason.
  void figures(Summary& p, const RankTimeline* r) const {
    const bool measured = r != nullptr && !r->steps.empty();
    const double window_s = measured ? r->window_ms().value_or(0) / 1e3 : 0;
    p.phases = {{"compute", std::nullopt}, {"pipeline", std::nullopt}, {kPhase, std::nullopt}};
    if (measured) {
      PhaseCounts& loop = p.phases[kPhase].emplace();
      loop.steps = static_cast<int64_t>(r->steps.size());
      loop.batches = loop.steps;
      loop.samples = r->samples;
      loop.bytes = r->bytes;
      loop.window_s = window_s;
      loop.warmup_steps = r->warmup_batches;
      loop.time_to_first_batch_ms = r->time_to_first_batch_ms;
    }
    const char* why =
        "a user's job: mmprof runs neither its data pipeline nor its step alone; mmprof baseline "
        "--like RUN measures the stand-in's";
    p.throughput.compute.why_null = why;
    p.throughput.pipeline.why_null = why;
    if (measured) {
      PhaseRates& e2e = p.throughput.end_to_end;
      e2e.samples_per_s = r->samples_per_s;
      e2e.samples_per_s_wall = r->samples_per_s_wall;
      if (r->step_ms_total > 0)
        e2e.batches_per_s = static_cast<double>(r->steps.size()) / (r->step_ms_total / 1e3);
      p.stall_fraction = r->stall_fraction;
    }
    if (r != nullptr) p.time_to_first_batch_ms = r->time_to_first_batch_ms;
    const StageTimes stages = r != nullptr ? r->stage_times : StageTimes{};
    Latency& l = p.latency;
    if (measured) l.phase = l.stages_phase = kPhase;
    if (r != nullptr) {
      l.step = rundir::spread_of(r->step_ms);
      l.wait = rundir::spread_of(r->wait_ms);
      l.compute = rundir::spread_of(r->compute_ms);
    }
    l.stages = {{"read", {}},
                {"decode", rundir::spread_of(stages.decode_ms)},
                {"augment", rundir::spread_of(stages.augment_ms)},
                {"collate", rundir::spread_of(stages.collate_ms)},
                {"pin", rundir::spread_of(stages.pin_ms)},
                {"getitem", rundir::spread_of(stages.getitem_ms)},
                {"fetch", rundir::spread_of(stages.fetch_ms)}};
    for (const auto& [name, d] : stages.transform_ms)
      l.transforms[name] = rundir::spread_of(d);
    l.getitem_per_call = stages.getitem_per_call;
  }

  // What the injection library wrote, from every CUDA process of the job (one file each).
  GpuTraceResult read_gpu_trace() const {
    GpuTraceResult trace;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(o_.out / run_file::gpu, ec)) {
      if (!gpu::is_gpu_events_file(e.path())) continue;
      const gpu::GpuEventsFile f = gpu::read_gpu_events(e.path());
      trace.events.insert(trace.events.end(), f.events.begin(), f.events.end());
      trace.dropped_records += f.header.dropped;
      trace.incomplete_records += f.header.incomplete;
      trace.clock_method = f.header.clock_method;
    }
    return trace;
  }

  void gpu_part(Summary& p, const RankTimeline* r, const GpuTraceResult& trace) const {
    std::string why;
    for (const auto& u : unavailable_)
      if (u.rfind("gpu:", 0) == 0) why = u.substr(5);
    if (why.empty() && trace.events.empty()) why = "unavailable: the job made no CUDA activity";
    if (!why.empty() || r == nullptr) {
      p.gpu.reset();
      p.gpu_unavailable = why.empty() ? "no measured step" : why;
      return;
    }
    std::vector<gpu::Interval> steps, waits;
    for (const StepRow& s : r->steps) {
      const auto step_ns = static_cast<int64_t>(s.step_ms * 1e6);
      const auto wait_ns = static_cast<int64_t>(s.wait_ms * 1e6);
      steps.push_back({s.t_start_ns, s.t_start_ns + step_ns});
      waits.push_back({s.t_start_ns, s.t_start_ns + wait_ns});
    }
    p.gpu = gpu_block(trace, steps, waits, {});
    p.gpu_unavailable.clear();
  }

  TraceFigures trace_part(const JobTimeline& timeline, const GpuTraceResult& gpu_trace) const {
    const auto rows = RunDir::open(o_.out).resources();
    const JobTraceCounts counts = write_job_trace(o_.out / run_file::trace, records_, timeline,
                                                  rows ? *rows : std::vector<ResourceRow>{},
                                                  gpu_trace.events, o_.config.trace.max_events);
    TraceFigures t;
    t.file = run_file::trace;
    t.events = counts.events;
    t.recorded_events = counts.events + counts.dropped;
    t.dropped_events = counts.dropped;
    t.max_events = o_.config.trace.max_events;
    t.gpu_events = gpu_trace.events.size();
    t.source = "the hook's records, after the run";
    return t;
  }

  // Every process the hook names a DataLoader worker is one in `memory`, with its loader (its
  // construction order in its main process, and that process): a worker sampled before its
  // first records were read (a short run) is moved out of `external`, and a job with a training
  // and a validation loader has workers of both.
  void name_workers(MemoryPeaks& memory) const {
    std::vector<ProcessMemory> external;
    for (ProcessMemory& p : memory.external) {
      const auto id = p.role != "external" ? std::nullopt : identify(records_, p.pid);
      if (!id || !id->worker) {
        external.push_back(std::move(p));
        continue;
      }
      p.role = "worker";
      p.comm.clear();
      p.index = id->worker_id.value_or(-1);
      if (id->rank) p.rank = *id->rank;
      memory.workers.push_back(std::move(p));
    }
    memory.external = std::move(external);
    for (ProcessMemory& w : memory.workers) {
      const auto id = identify(records_, w.pid);
      if (!id || !id->loader || !id->main_pid) continue;
      w.loader = *id->loader;
      w.main_pid = *id->main_pid;
    }
  }

  // Copy-on-write growth of every DataLoader worker over the measured window.
  std::vector<CowGrowth> cow_part(const RankTimeline* r) const {
    std::vector<CowGrowth> out;
    if (r == nullptr || !r->window_start_ns || !r->window_end_ns) return out;
    const auto rows = RunDir::open(o_.out).resources();
    if (!rows) return out;
    std::set<int> workers;
    for (const ResourceRow& row : *rows)
      if (row.role == "worker") workers.insert(row.pid);
    for (const int pid : workers) {
      const auto series = uss_series(*rows, pid, *r->window_start_ns, *r->window_end_ns);
      CowGrowth& g = out.emplace_back(cow_growth(pid, series));
      if (const auto id = identify(records_, pid)) g.process = id->label();
    }
    return out;
  }

  // What the hook's content digests cost inside the job's loop (issue 32, case 16): each is the
  // hook's own time after the batch's __next__ returned (hook_ns), which the job's loop pays and
  // mmprof's step counts as compute. The hook digests only the warm-up's batches; one in a
  // measured step (n >= warm-up) is counted, and said.
  DigestCost digest_cost(const RankTimeline* r) const {
    int64_t batches = 0, in_measured = 0, total_ns = 0, max_ns = 0;
    for (const BatchRecord& b : records_.batches) {
      if (r == nullptr || !r->loader || b.pid != r->pid || b.loader != *r->loader || !b.digest)
        continue;
      ++batches;
      total_ns += b.hook_ns;
      max_ns = std::max(max_ns, b.hook_ns);
      if (b.n >= o_.warmup_steps) ++in_measured;
    }
    const std::string where =
        batches == 0 ? fmt::format("no batch digested (warm-up {} steps): ab cannot check content",
                                   o_.warmup_steps)
        : in_measured == 0
            ? "all in the warm-up"
            : fmt::format("{} in measured steps, whose compute they lengthen", in_measured);
    const double total_ms = static_cast<double>(total_ns) / 1e6;
    const double max_ms = static_cast<double>(max_ns) / 1e6;
    return {.batches = batches,
            .in_measured_steps = in_measured,
            .total_ms = total_ms,
            .max_ms = max_ms,
            .text = batches == 0 ? where
                                 : fmt::format("{} batches digested in {:.1f} ms (at most {:.1f} "
                                               "ms one), {}",
                                               batches, total_ms, max_ms, where)};
  }

  JobFigures job_part(const JobTimeline& timeline, const JobDescription& job,
                      const RankTimeline* primary) const {
    JobFigures j;
    timeline.figures(j);
    j.command = o_.command;
    j.pid = job_->pid();
    j.exit_code = exit_.exit_code;
    if (exit_.signal != 0) j.exit_signal = exit_.signal;
    j.exit = exit_.describe();
    j.stopped_by = stop_name(stop_->reason());
    j.ended = ended();
    steps_part(primary, j);
    j.forced = stop_->forced();  // records of the last moments may be lost
    j.killed_at_end = leftovers_;
    j.exception = exception_part();
    for (const StuckRecord& r : records_.stuck) {
      j.stuck.push_back({.loader = r.loader,
                         .worker = r.worker,
                         .pid = r.pid,
                         .indices = r.indices,
                         .item = r.item,
                         .seconds = static_cast<double>(r.ns - r.since_ns) / 1e9,
                         .text = r.text()});
    }
    j.hook = job.hook;
    j.digests = digest_cost(primary);
    j.dataloader = job.figures();
    j.cow = cow_part(primary);
    j.unavailable.assign(unavailable_.begin(), unavailable_.end());
    return j;
  }

  // How the job ended, in one sentence: a stop mmprof planned is not a failure or a signal.
  std::string ended() const {
    const std::string exit = exit_.describe();
    std::string out;
    switch (stop_->reason()) {
      case StopReason::hook_steps:
        out = fmt::format(
            "stopped by mmprof after the {} warm-up and {} measured batches asked "
            "({})",
            o_.warmup_steps, o_.steps.value_or(0), exit);
        break;
      case StopReason::duration:
        out = fmt::format("stopped by mmprof when the asked --duration of {} s was over ({})",
                          o_.duration_s.value_or(0), exit);
        break;
      case StopReason::interrupt:
        out = fmt::format("interrupted (Ctrl-C or SIGTERM forwarded to it): {}", exit);
        break;
      case StopReason::none:
        out = fmt::format("{} ({})", exit_.exit_code == 0 ? "ended by itself" : "failed", exit);
        break;
    }
    if (stop_->forced()) out += "; it did not exit within the grace period and was killed";
    return out;
  }

  // The measured steps against those asked; `short_why` says why a complete run measured too
  // little to stand on (the job ended by itself before the steps asked, or before any step).
  // The steps asked and measured, and why fewer were when the job ended by itself.
  void steps_part(const RankTimeline* r, JobFigures& j) const {
    const auto measured = static_cast<int64_t>(r != nullptr ? r->steps.size() : 0);
    j.warmup_asked = o_.warmup_steps;
    j.steps_asked = o_.steps;
    j.steps_measured = measured;
    if (status_ != "complete" || stop_->reason() != StopReason::none) return;
    if (measured == 0) {
      j.short_why = fmt::format(
          "the job ended by itself before any measured step (after {} warm-up batches asked): "
          "nothing was measured",
          o_.warmup_steps);
    } else if (o_.steps && measured < *o_.steps) {
      j.short_why = fmt::format(
          "the job ended by itself after {} of the {} measured steps asked (--steps {}): its "
          "figures rest on {} steps",
          measured, *o_.steps, *o_.steps, measured);
    }
  }

  // The exception that ended the job (its type, message and lines, and the process that raised
  // it), null when it raised none or completed (a helper process of its own may have raised).
  json exception_part() const {
    const auto e = job_exception(records_);
    if (!e || status_ == "complete") return nullptr;
    json j = e->to_json();
    j["pid"] = e->pid;
    const auto who = identify(records_, e->pid);
    j["process"] = who ? json(who->label()) : json(nullptr);
    return j;
  }

  // What a step of the job is, from what the hook saw (issue 31): the batch the followed loader
  // delivered (the median of its measured steps' samples, else its DataLoader's batch_size), the
  // world torch.distributed's launcher set (WORLD_SIZE; one process without it), the global
  // batch they make, and the dtype and shape of its first batch's tensors.
  json job_spec(const JobDescription& job, const RankTimeline* r) const {
    json spec = {{"step_kind", "external"},
                 {"training_step",
                  "the job's own loop: one iteration per batch of the followed "
                  "DataLoader (its wait + its work on the batch)"},
                 {"timings_include_model_compute", true},
                 {"world_size", nullptr},
                 {"world_size_source", nullptr},
                 {"per_device_batch", nullptr},
                 {"per_device_batch_source", nullptr},
                 {"accum_steps", nullptr},
                 {"accum_steps_source", nullptr},
                 {"global_batch", nullptr},
                 {"global_batch_source", nullptr},
                 {"batch_tensors", nullptr},
                 {"sample_tensor", nullptr}};
    if (r == nullptr) return spec;
    const json accum = gradient_accumulation(records_, *r);
    spec["accum_steps"] = accum["accum_steps"];
    spec["accum_steps_source"] = accum["source"];
    std::vector<int64_t> sizes;
    for (const StepRow& s : r->steps)
      sizes.push_back(s.samples);
    if (!sizes.empty()) {
      std::nth_element(sizes.begin(), sizes.begin() + sizes.size() / 2, sizes.end());
      spec["per_device_batch"] = sizes[sizes.size() / 2];
      spec["per_device_batch_source"] = fmt::format(
          "the median of the {} measured batches (their tensors' first dimension)", sizes.size());
    }
    for (const auto& l : job.loaders) {
      if (!l.followed || l.pid != r->pid || !spec["per_device_batch"].is_null()) continue;
      if (l.record.config.batch_size) {
        spec["per_device_batch"] = *l.record.config.batch_size;
        spec["per_device_batch_source"] = "the DataLoader's batch_size (no batch measured)";
      }
    }
    for (const ProcRecord& p : records_.procs) {
      if (p.pid != r->pid || !spec["world_size"].is_null()) continue;
      spec["world_size"] = p.world_size ? *p.world_size : 1;
      spec["world_size_source"] =
          p.world_size ? "WORLD_SIZE, as torchrun sets it" : "no WORLD_SIZE: one process";
    }
    if (spec["per_device_batch"].is_number() && spec["world_size"].is_number()) {
      // Samples per optimizer step, as the stand-in's: per-device batch x accumulation x world.
      const bool accumulated = spec["accum_steps"].is_number();
      spec["global_batch"] = spec["per_device_batch"].get<int64_t>() *
                             (accumulated ? spec["accum_steps"].get<int64_t>() : 1) *
                             spec["world_size"].get<int64_t>();
      spec["global_batch_source"] =
          accumulated ? "per_device_batch x accum_steps x world_size: samples per optimizer step"
                      : "per_device_batch x world_size: samples per batch of all ranks (the "
                        "optimizer's steps were not seen)";
    }
    for (const BatchRecord& b : records_.batches) {
      if (b.pid != r->pid || !r->loader || b.loader != *r->loader || !b.shapes.is_array()) continue;
      spec["batch_tensors"] = b.shapes;
      const json& first = b.shapes.empty() ? json() : b.shapes[0];
      if (first.is_array() && first.size() == 2 && first[1].is_array() && !first[1].empty()) {
        json shape = first[1];
        shape.erase(shape.begin());  // the batch dimension
        spec["sample_tensor"] = {{"dtype", first[0]}, {"shape", shape}};
      }
      break;
    }
    return spec;
  }

  const ExternalRunOptions& o_;
  rundir::RunWriter writer_;
  fs::path hook_dir_, stop_file_;
  HookTail tail_;
  HookRecords records_;
  procfs::ProcFs procfs_;
  MonotonicClock clock_;
  ResourceSampler sampler_;
  ProgressLine progress_;
  bool warmup_shown_ = false;          // the progress of the warm-up ended (its last batch came)
  size_t stuck_told_ = 0;              // stuck records said on the terminal
  std::unique_ptr<JobOutput> output_;  // before job_: the job's pipe outlives the job's end
  std::unique_ptr<JobProcess> job_;
  RunFacts start_;
  std::vector<std::string> unavailable_, leftovers_;
  size_t labelled_ = 0;
  bool ranked_ = false;
  int64_t batches_seen_ = 0;
  std::optional<int64_t> measured_since_;
  std::optional<JobStop> stop_;  // from the launch
  JobExit exit_;
  std::string status_ = "complete", message_;
  json description_ = nullptr, spec_ = nullptr;
  JobDataset dataset_;
};

}  // namespace

Summary run_external(const ExternalRunOptions& options) {
  return ExternalRun(options).run();
}

}  // namespace mmprof::external
