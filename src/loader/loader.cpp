#include "mmprof/loader.hpp"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <optional>

#include "data/sampler.hpp"
#include "gpu/cuda_runtime.hpp"
#include "loader/batch_filler.hpp"
#include "loader/batch_slot.hpp"
#include "loader/device_decode.hpp"
#include "loader/memory_plan.hpp"
#include "loader/worker_pool.hpp"
#include "loader/worker_recovery.hpp"
#include "probe/clock.hpp"
#include "trace/tracer.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"

namespace mmprof {

struct Loader::Impl {
  Impl(const Config& c, const Dataset& d, uint64_t first_batch)
      : config(c),
        dataset(d),
        shards(c.data.stream ? shard_members(d) : ShardMembers{}),
        sampler(sampler_options(c, c.data.stream ? &shards : nullptr)),
        workers(c.loader.num_workers),
        max_outstanding(static_cast<uint64_t>(std::max(1, workers * c.loader.prefetch_factor))),
        // Each worker owns prefetch_factor + 1 slots (its outstanding batches plus one the
        // consumer may hold): a worker keeps writing into the same pages, so after warm-up its
        // batches cost no page faults (about 15 us per 4 KB page on these VMs).
        slots_per_worker(ring_slots_per_worker(c.loader)),
        ring(slot_geometry(c), ring_slots(c.loader), c.loader.huge_pages),
        plan(static_cast<uint32_t>(d.size()), 0, sampler),
        recovery(config.loader, d, ring, workers, slots_per_worker) {
    if (plan.num_batches() == 0) {
      throw InputError(fmt::format("rank {} of {} gets no samples from dataset {} ({} samples)",
                                   c.dist.rank, c.dist.world_size, d.root().string(), d.size()));
    }
    start_at(first_batch);
    free_slots.resize(static_cast<size_t>(std::max(1, workers)));
    for (uint32_t s = 0; s < ring.size(); ++s)
      free_slots[owner(s)].push_back(s);
    setup_pinning();
    start_workers();
    // After the fork: the workers never see the device's context.
    if (decodes_on_device(c, Modality::image) || decodes_on_device(c, Modality::video)) {
      device_stage.emplace(c, make_device_decoder(c));
      stats.decode_placement = device_stage->placement();
    }
    stats.ring_bytes = ring.mapped_bytes();
  }

  // A batch id counts batches from the first epoch's first: its epoch is the one whose batches
  // reach it (a permutation's epochs all have as many; streamed shards' may not).
  void start_at(uint64_t first_batch) {
    uint64_t left = first_batch;
    if (!plan.streamed() && left >= plan.num_batches()) {
      plan = EpochPlan(static_cast<uint32_t>(dataset.size()),
                       static_cast<int64_t>(left / plan.num_batches()), sampler);
      left %= plan.num_batches();
    }
    while (left >= plan.num_batches()) {
      left -= plan.num_batches();
      plan = EpochPlan(static_cast<uint32_t>(dataset.size()), plan.epoch() + 1, sampler);
    }
    batch_in_epoch = left;
    next_dispatch = next_deliver = first_batch;
  }

  void setup_pinning() {
    if (!uses_pinned_memory(config.loader.pin_memory)) {
      stats.pin_mode = "pageable: " + (config.loader.pin_memory == PinMemory::off
                                           ? std::string("loader.pin_memory=false")
                                           : gpu::gpu_availability().reason);
      return;
    }
    if (!gpu::gpu_availability().available) {
      throw UnavailableError("loader.pin_memory=true needs a GPU: " +
                             gpu::gpu_availability().reason);
    }
    // Tokens and tensors only: the staging area of decode on the GPU is never pinned.
    pinned.emplace(gpu::Memory::pinned_host, ring.geometry().staging_offset());
    stats.pin_mode = "pinned";
  }

  void start_workers() {
    if (workers == 0) {
      inline_filler.emplace(config, dataset, 0);
      return;
    }
    pool.emplace(config, dataset, ring, workers, config.loader.worker_mode);
    stats.worker_pids = pool->pids();
  }

  // Writes the next planned batch into a free slot and hands it to its worker (round robin by
  // batch id, as PyTorch's DataLoader). Returns false when nothing can be dispatched now.
  uint32_t owner(uint32_t slot) const noexcept { return slot / slots_per_worker; }

  bool dispatch_one() {
    if (next_dispatch - next_deliver >= max_outstanding) return false;
    if (batch_in_epoch == plan.num_batches()) {
      // Non-persistent workers end with their epoch: the next epoch starts a fresh pool once
      // every batch of this one has been delivered (PyTorch re-creates its iterator).
      if (!config.loader.persistent_workers && workers > 0) {
        if (next_dispatch != next_deliver) return false;
        pool.reset();
        start_workers();
        stats.worker_restarts++;
      }
      plan = EpochPlan(static_cast<uint32_t>(dataset.size()), plan.epoch() + 1, sampler);
      batch_in_epoch = 0;
    }
    // A streamed shard's batch belongs to the worker reading that shard.
    const int worker = workers == 0      ? 0
                       : plan.streamed() ? plan.worker(batch_in_epoch)
                                         : static_cast<int>(next_dispatch % workers);
    auto& free = free_slots[static_cast<size_t>(worker)];
    if (free.empty()) return false;
    const uint32_t slot_id = free.back();
    free.pop_back();
    const SlotView slot = ring.slot(slot_id);
    SlotHeader& h = slot.header();
    h.batch_id = next_dispatch;
    h.epoch = plan.epoch();
    h.planned = static_cast<uint32_t>(plan.batch_size(batch_in_epoch));
    h.read_until = plan.read_until(batch_in_epoch);
    const uint32_t* idx = plan.batch_begin(batch_in_epoch);
    for (uint32_t i = 0; i < h.planned; ++i)
      slot.records()[i].index = idx[i];
    recovery.prepare(slot);
    ++batch_in_epoch;
    if (pool) {
      pool->dispatch(worker, slot_id);  // to a dead worker: reported by the next wait
      recovery.dispatched(worker, monotonic_ns());
    }
    in_flight.emplace(next_dispatch, slot_id);
    ++next_dispatch;
    return true;
  }

  // The slot of the batch to deliver next, once it is complete.
  std::optional<uint32_t> deliverable() {
    if (config.loader.in_order) {
      auto it = completed.find(next_deliver);
      if (it == completed.end()) return std::nullopt;
      const uint32_t slot = it->second;
      completed.erase(it);
      return slot;
    }
    if (completed.empty()) return std::nullopt;
    auto it = completed.begin();  // the oldest completed batch
    const uint32_t slot = it->second;
    // Out of order within an epoch only, as PyTorch's in_order=False: a batch of the next epoch
    // waits until every batch of the current one has been delivered.
    if (!in_flight.empty() && in_flight.begin()->first < it->first &&
        ring.slot(in_flight.begin()->second).header().epoch != ring.slot(slot).header().epoch) {
      return std::nullopt;
    }
    completed.erase(it);
    return slot;
  }

  uint32_t wait_for_batch() {
    if (!pool) {
      dispatch_one();
      const auto [id, slot] = *in_flight.begin();
      inline_filler->fill(ring.slot(slot));
      in_flight.clear();
      return slot;
    }
    while (dispatch_one()) {
    }
    for (;;) {
      if (auto slot = deliverable()) return *slot;
      throw_if_interrupted();
      done.clear();
      exits.clear();
      pool->wait_completions(100, done, exits);
      const int64_t now = monotonic_ns();
      for (const auto& [worker, slot] : done) {
        const uint64_t id = ring.slot(slot).header().batch_id;
        in_flight.erase(id);
        completed.emplace(id, slot);
        recovery.completed(worker, now);
      }
      // Every wait is bounded: a worker that died is seen by its done pipe's EOF, one that hangs
      // by loader.timeout_s; either is replaced (its batches retried) or fails the run.
      for (const auto& e : exits)
        recovery.recover(e, false, in_flight, *pool, stats);
      for (const int w : recovery.hung(now))
        recovery.recover(pool->kill(w), true, in_flight, *pool, stats);
      while (dispatch_one()) {
      }
    }
  }

  void fill_batch_view(uint32_t slot_id, int64_t t_wait_start) {
    const SlotView slot = ring.slot(slot_id);
    const SlotHeader& h = slot.header();
    const int64_t now = monotonic_ns();
    batch.batch_id = h.batch_id;
    batch.epoch = h.epoch;
    batch.worker = h.worker;
    batch.size = h.n_ok;
    batch.n_images = h.n_images;
    batch.n_videos = h.n_videos;
    batch.digest = h.digest;
    batch.payload_bytes = h.payload_bytes;
    batch.collate_ms = static_cast<double>(h.collate_ns) / 1e6;
    batch.samples.clear();
    batch.failures.clear();
    batch.bytes_read = 0;
    batch.read_retries = 0;
    batch.continued_reads = batch.media_reads = 0;
    for (uint32_t i = 0; i < h.planned; ++i) {
      const SampleRecord& r = slot.records()[i];
      batch.bytes_read += r.bytes;
      batch.read_retries += r.retries;
      batch.continued_reads += r.continued;
      batch.media_reads += r.bytes > 0 ? 1 : 0;
      if (r.status == SampleStatus::machine) {
        // Not a bad sample: every later one would fail the same way, counted as bad data.
        throw RunError(fmt::format(
            "worker {} could not process sample {}: {}; the run stops, since this is the machine "
            "and not the data (loader.on_error applies to bad samples only)",
            r.worker, dataset.samples()[r.index].key, r.message));
      }
      if (r.status == SampleStatus::failed) {
        batch.failures.push_back(SampleFailure{r.index, dataset.samples()[r.index].key,
                                               stage_name(r.failed_stage), r.message});
        continue;
      }
      batch.samples.push_back(
          SampleInfo{r.index, static_cast<Modality>(r.modality), r.row, r.worker, r.t_start_ns,
                     static_cast<double>(r.read_ns) / 1e6, static_cast<double>(r.decode_ns) / 1e6,
                     static_cast<double>(r.augment_ns) / 1e6, r.bytes, r.minflt, r.majflt, r.digest,
                     std::string(r.format, strnlen(r.format, sizeof r.format)), r.source_width,
                     r.source_height, r.deferred != 0});
    }
    const std::byte* arena = slot.arena();
    batch.pin_ms = 0;
    if (pinned) arena = copy_to_pinned(slot, batch.pin_ms);
    batch.tokens = reinterpret_cast<const int32_t*>(arena + h.tokens_offset);
    batch.images = arena + h.image_offset;
    batch.videos = arena + h.video_offset;
    batch.device_images = batch.device_videos = nullptr;
    if (const std::byte* rows = device_stage ? device_stage->device_rows() : nullptr) {
      if (decodes_on_device(config, Modality::image)) {
        batch.device_images = rows + h.image_offset;
        batch.images = nullptr;
      }
      if (decodes_on_device(config, Modality::video)) {
        batch.device_videos = rows + h.video_offset;
        batch.videos = nullptr;
      }
    }
    batch.ready_ns = monotonic_ns();
    batch.wait_ms = static_cast<double>(now - t_wait_start) / 1e6;
    trace::span(trace::EventName::wait, t_wait_start, now, static_cast<int64_t>(h.batch_id));
  }

  // The pin stage: the copy PyTorch's pin_memory thread makes, from the ring into page-locked
  // memory, of exactly the bytes the batch uses.
  const std::byte* copy_to_pinned(const SlotView& slot, double& pin_ms) {
    const SlotHeader& h = slot.header();
    const SlotGeometry& g = slot.geometry();
    const int64_t t0 = monotonic_ns();
    auto* dst = static_cast<std::byte*>(pinned->data());
    std::memcpy(dst + h.tokens_offset, slot.arena() + h.tokens_offset,
                h.n_ok * static_cast<size_t>(g.seq_len) * sizeof(int32_t));
    // A tensor decode on the GPU left in device memory is not the pin stage's to copy.
    const bool on_device = device_stage && device_stage->device_rows() != nullptr;
    if (!on_device || !decodes_on_device(config, Modality::image)) {
      std::memcpy(dst + h.image_offset, slot.arena() + h.image_offset,
                  h.n_images * g.image_bytes());
    }
    if (!on_device || !decodes_on_device(config, Modality::video)) {
      std::memcpy(dst + h.video_offset, slot.arena() + h.video_offset,
                  h.n_videos * g.video_bytes());
    }
    const int64_t t1 = monotonic_ns();
    pin_ms = static_cast<double>(t1 - t0) / 1e6;
    trace::span(trace::EventName::pin, t0, t1, static_cast<int64_t>(h.batch_id));
    return dst;
  }

  void check_failures() const {
    if (config.loader.on_error != OnError::fail || batch.failures.empty()) return;
    const SampleFailure& f = batch.failures.front();
    const auto file = dataset.root() / dataset.files()[dataset.samples()[f.index].media.file];
    throw SampleError(fmt::format("sample {} ({}) failed in stage {}: {} (loader.on_error=fail)",
                                  f.key, file.string(), f.stage, f.message),
                      f, batch.batch_id, batch.epoch);
  }

  const Config config;
  const Dataset& dataset;
  ShardMembers shards;  // data.layout=tar_stream only
  SamplerOptions sampler;
  int workers;
  uint64_t max_outstanding;
  uint32_t slots_per_worker;
  SlotRing ring;
  EpochPlan plan;
  WorkerRecovery recovery;
  size_t batch_in_epoch = 0;
  uint64_t next_dispatch = 0, next_deliver = 0;
  std::vector<std::vector<uint32_t>> free_slots;  // per owning worker
  std::map<uint64_t, uint32_t> in_flight;         // batch id -> slot
  std::map<uint64_t, uint32_t> completed;         // batch id -> slot, not yet delivered
  std::vector<std::pair<int, uint32_t>> done;
  std::vector<WorkerExit> exits;
  std::optional<uint32_t> held_slot;
  std::optional<WorkerPool> pool;
  std::optional<BatchFiller> inline_filler;
  std::optional<gpu::CudaBuffer> pinned;
  std::optional<DeviceDecodeStage> device_stage;
  Batch batch;
  LoaderStats stats;
  int64_t construct_ns = 0;   // ring allocation and worker start-up
  int64_t first_next_ns = 0;  // when next() was first called
};

Loader::Loader(const Config& config, const Dataset& dataset, uint64_t first_batch) {
  // Time to first batch counts from here: ring allocation and worker start-up included. Workers
  // are forked now; batches are first dispatched by next().
  const int64_t t0 = monotonic_ns();
  trace::loader_started(config.loader.num_workers);  // a new batch-id space, before any fork
  impl_ = std::make_unique<Impl>(config, dataset, first_batch);
  impl_->construct_ns = monotonic_ns() - t0;
}

Loader::~Loader() = default;

const Batch& Loader::next() {
  Impl& m = *impl_;
  if (m.held_slot) {
    if (!m.config.loader.buffer_reuse) m.ring.discard_arena(*m.held_slot);
    m.free_slots[m.owner(*m.held_slot)].push_back(*m.held_slot);
    m.held_slot.reset();
  }
  const int64_t t0 = monotonic_ns();
  if (m.first_next_ns == 0) m.first_next_ns = t0;
  const uint32_t slot = m.wait_for_batch();
  m.held_slot = slot;
  ++m.next_deliver;
  const int64_t fallbacks_before = m.device_stage ? m.device_stage->fallbacks() : 0;
  const double device_decode_ms = m.device_stage ? m.device_stage->run(m.ring.slot(slot)) : 0;
  m.fill_batch_view(slot, t0);
  m.batch.device_decode_ms = device_decode_ms;
  m.batch.device_decode_fallbacks =
      m.device_stage ? m.device_stage->fallbacks() - fallbacks_before : 0;
  if (m.batch.device_decode_fallbacks > 0 && m.stats.decode_fallback_reason.empty())
    m.stats.decode_fallback_reason = m.device_stage->fallback_reason();
  trace::queue_depth(m.completed.size(), m.in_flight.size());
  m.stats.batches++;
  m.stats.samples += m.batch.size;
  m.stats.failures += static_cast<int64_t>(m.batch.failures.size());
  if (m.stats.time_to_first_batch_ms < 0) {
    // Start-up plus the first wait; an idle gap between construction and the first next() call
    // (workers forked early, before a step loads libtorch or CUDA) is not counted.
    m.stats.time_to_first_batch_ms =
        static_cast<double>(m.construct_ns + m.batch.ready_ns - m.first_next_ns) / 1e6;
  }
  m.check_failures();
  return m.batch;
}

std::vector<uint8_t> pixels_on_host(const Batch& batch, const BatchLayout& layout) {
  const size_t images = batch.n_images * layout.image_bytes;
  const size_t videos = batch.n_videos * layout.video_bytes;
  std::vector<uint8_t> out(images + videos);
  const auto take = [&](const void* host, const void* device, size_t bytes, uint8_t* dst) {
    if (bytes == 0) return;
    if (device != nullptr) {
      gpu::copy(dst, device, bytes, gpu::Direction::to_host);
    } else {
      std::memcpy(dst, host, bytes);
    }
  };
  take(batch.images, batch.device_images, images, out.data());
  take(batch.videos, batch.device_videos, videos, out.data() + images);
  return out;
}

const LoaderStats& Loader::stats() const noexcept {
  return impl_->stats;
}

size_t Loader::batches_per_epoch() const noexcept {
  return impl_->plan.num_batches();
}

}  // namespace mmprof
