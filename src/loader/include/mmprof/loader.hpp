#pragma once
// The mmprof loader: a C++ reimplementation of a PyTorch DataLoader-style multimodal pipeline.
// Worker processes (or threads) decode and augment whole batches into a shared-memory ring;
// the consumer receives views of those batches in order (or as they complete), with per-sample
// timings, without any per-sample copy through pipes.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "mmprof/config.hpp"
#include "mmprof/dataset.hpp"
#include "mmprof/error.hpp"

namespace mmprof {

struct SampleInfo {
  uint32_t index;  // into Dataset::samples()
  Modality modality;
  int32_t row;  // row in images or videos
  int32_t worker;
  int64_t t_start_ns;
  double read_ms, decode_ms, augment_ms;
  uint64_t bytes;
  int64_t minflt, majflt;
  uint64_t digest;
  // The image format ("jpeg", "webp": the media-format table's name) or the video codec ("h264"),
  // and the source's size in pixels, as the worker's probe found them.
  std::string format;
  int32_t source_width, source_height;
  // Decoded by the main process (decode placed on the device), not by `worker`: its decode and
  // augment times are the main process's.
  bool decoded_in_main = false;
};

struct SampleFailure {
  uint32_t index;
  std::string key;
  std::string stage;
  std::string message;
};

// Thrown by Loader::next() for a failed sample under loader.on_error=fail; carries the sample so
// the caller can log it before stopping.
class SampleError : public RunError {
 public:
  SampleError(const std::string& what, SampleFailure failure, uint64_t batch_id, int64_t epoch)
      : RunError(what), failure_(std::move(failure)), batch_id_(batch_id), epoch_(epoch) {}
  const SampleFailure& failure() const noexcept { return failure_; }
  uint64_t batch_id() const noexcept { return batch_id_; }
  int64_t epoch() const noexcept { return epoch_; }

 private:
  SampleFailure failure_;
  uint64_t batch_id_;
  int64_t epoch_;
};

// A delivered batch: views into the ring, valid until the next call of Loader::next().
struct Batch {
  uint64_t batch_id = 0;  // position in the loader's sequence of batches
  int64_t epoch = 0;
  int worker = -1;
  uint32_t size = 0;  // samples delivered (planned minus failed)
  uint32_t n_images = 0, n_videos = 0;
  const void* images = nullptr;  // n_images x 3 x S x S, dtype of image.dtype
  const void* videos = nullptr;  // n_videos x T x 3 x S x S
  // Decode on the GPU (decode.gpu_backend=nvdec): the modality's tensor in device memory, its
  // host pointer above then null. Null when the tensor is on the host.
  const void* device_images = nullptr;
  const void* device_videos = nullptr;
  const int32_t* tokens = nullptr;  // size x seq_len, in delivery order of samples
  std::vector<SampleInfo> samples;
  std::vector<SampleFailure> failures;
  uint64_t digest = 0;
  uint64_t bytes_read = 0;    // media + caption bytes
  uint64_t read_retries = 0;  // remote requests retried (an http(s) data.path)
  // Samples whose media read continued its worker's previous read (sequential reading: a tar
  // stream), and samples whose media was read at all.
  uint32_t continued_reads = 0, media_reads = 0;
  uint64_t payload_bytes = 0;  // tensor bytes delivered
  double collate_ms = 0;
  double pin_ms = 0;  // copy into pinned memory (0 when pageable)
  // Decode placed on the device: the main process's decode of the batch's deferred samples,
  // inside wait_ms (0 when every sample was decoded by a worker).
  double device_decode_ms = 0;
  int64_t device_decode_fallbacks = 0;  // of its samples, decoded on the CPU instead (nvdec)
  double wait_ms = 0;                   // how long next() blocked for this batch
  int64_t ready_ns = 0;                 // when next() returned it
};

struct LoaderStats {
  double time_to_first_batch_ms = -1;  // construction time + first next() call to its return
  int64_t batches = 0, samples = 0, failures = 0;
  int worker_restarts = 0;  // pools or workers started again (epochs, respawns): new pids
  // Worker faults (loader.on_worker_failure=respawn): workers replaced after dying or hanging,
  // batches dispatched again because of that, workers killed for passing loader.timeout_s, and
  // one sentence per fault naming the worker, its pid and the sample it held.
  int respawns = 0, retries = 0, hung_workers = 0;
  std::vector<std::string> worker_faults;
  std::vector<int> worker_pids;  // current workers (processes), empty for threads / 0 workers
  std::string pin_mode;          // "pinned" or "pageable: <reason>"
  // Where samples are decoded: "cpu workers", or the main process and the backend (docs/gpu.md).
  std::string decode_placement = "cpu workers";
  std::string decode_fallback_reason;  // why the first sample placed on the GPU went to the CPU
  size_t ring_bytes = 0;               // virtual size of the shared batch ring
};

// The bytes of one sample's tensors in the batches a configuration delivers, for consumers that
// size their buffers before the first batch (a GPU step's device copy).
struct BatchLayout {
  size_t capacity = 0;      // samples per batch (loader.batch_size)
  size_t tokens_bytes = 0;  // per sample: seq_len int32 tokens
  size_t image_bytes = 0, video_bytes = 0;
  // The largest batch: every sample of the larger modality, with its tokens.
  size_t max_bytes() const noexcept {
    return capacity * (tokens_bytes + (image_bytes > video_bytes ? image_bytes : video_bytes));
  }
};
BatchLayout batch_layout(const Config& config);

// The batch's image then video tensor bytes in host memory, copied from the device where decode
// on the GPU left them there (mmprof ab's PSNR check of placement arms).
std::vector<uint8_t> pixels_on_host(const Batch& batch, const BatchLayout& layout);

class Loader {
 public:
  // Starts the workers (forks them in process mode); prefetching begins with the first next().
  // Construct it before anything a worker must not inherit (libtorch, a CUDA context).
  // `first_batch` > 0 starts the sequence there (a resumed run): the batches delivered are those
  // an uninterrupted loader delivers with the same ids, since plans and augmentation are drawn
  // from (seed, epoch, sample).
  Loader(const Config& config, const Dataset& dataset, uint64_t first_batch = 0);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Blocks until the next batch is ready and returns it; epochs follow each other without end.
  // Throws SampleError when a sample fails under on_error=fail, RunError when a worker dies.
  const Batch& next();
  const LoaderStats& stats() const noexcept;
  size_t batches_per_epoch() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mmprof
