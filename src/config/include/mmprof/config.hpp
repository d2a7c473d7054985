#pragma once
// The run configuration: the keys of DESIGN.md, with defaults, loaded from YAML and overridden by
// `--set a.b=c`. The resolved tree (every key, after overrides) is saved in manifest.json.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mmprof/modality.hpp"

namespace mmprof {

enum class Layout { auto_detect, files, tar };
enum class WorkerMode { process, thread };
enum class OnError { skip, fail };
enum class WorkerFailure { respawn, fail };
enum class PinMemory { auto_detect, on, off };
enum class StepKind { none, sleep, spin, torch, gemm };
enum class ImageDType { uint8, float32 };
enum class VideoSampling { uniform, random_window };
enum class ImageResizer { mmprof, swscale };
enum class ImageDctScales { halves, eighths };
// Where a modality's samples are decoded: in the loader's CPU workers, or in the main process on
// the GPU (the workers then only read the compressed bytes).
enum class DecodeDevice { cpu, gpu };
// What decodes on the "GPU": NVIDIA's engines through FFmpeg's CUDA hwaccel (NVDEC for video,
// JPEG through FFmpeg's MJPEG hwaccel), or the host standing in for them in the main process
// (the placement without a device: rehearsals and tests; its figures say "emulated").
enum class GpuDecodeBackend { nvdec, emulated };
// The page cache before each loader phase: as it is, filled with the dataset, or emptied of it.
enum class DataCache { as_is, warm, cold };

// An http(s):// data.path (data/http_client.hpp).
struct RemoteConfig {
  int concurrency = 4;  // range requests in flight per worker
  int retries = 3;      // per request, for failures worth trying again
  double timeout_s = 30;
};

struct DataConfig {
  std::optional<std::string> path;  // nullopt = the embedded default dataset; may be a URL
  Layout layout = Layout::auto_detect;
  // data.layout=tar_stream: tar shards read as WebDataset does (layout is then tar): shards
  // split by rank, then by worker, each worker reading its shards front to back through a
  // shuffle buffer of shuffle_buffer samples (data/sampler.hpp).
  bool stream = false;
  int shuffle_buffer = 1000;
  DataCache cache = DataCache::as_is;
  RemoteConfig remote;
};

struct LoaderConfig {
  int batch_size = 32;
  int num_workers = 2;
  WorkerMode worker_mode = WorkerMode::process;
  int prefetch_factor = 2;
  bool persistent_workers = true;
  bool in_order = true;
  PinMemory pin_memory = PinMemory::auto_detect;
  bool shuffle = true;
  uint64_t seed = 0;
  OnError on_error = OnError::skip;
  // A worker process that dies (killed, crashed) or holds a batch past timeout_s: respawn it and
  // retry its batches (at most max_respawns times per loader), or fail the run.
  WorkerFailure on_worker_failure = WorkerFailure::respawn;
  int max_respawns = 4;
  double timeout_s = 300;  // longest a worker may hold one batch
  // Speed levers (docs/performance.md measures each as an mmprof ab experiment):
  // keep each worker's decode buffers between samples (false: freed after every sample, so each
  // sample faults its pages in again, as a loader allocating fresh arrays per sample does);
  bool buffer_reuse = true;
  // back the batch ring with huge pages (memfd MFD_HUGETLB from the hugetlbfs pool; refused with
  // the pool's numbers when it is too small);
  bool huge_pages = false;
  // pin worker i to the i-th CPU of the process's affinity mask (modulo its size).
  bool pin_workers = false;
};

struct ImageConfig {
  int size = 224;
  DecodeDevice decode_device = DecodeDevice::cpu;  // image.decode_device, else decode.device
  ImageDType dtype = ImageDType::float32;
  bool dct_scaling = true;
  // The scaling factors it may pick: 1/2, 1/4, 1/8 (SIMD in libjpeg-turbo), or every n/8.
  ImageDctScales dct_scales = ImageDctScales::halves;
  // JPEG: decode only the rows and block columns around the random crop (DecodeRegion::crop).
  bool crop_decode = true;
  ImageResizer resizer =
      ImageResizer::mmprof;  // crop+resize: mmprof's PIL-equivalent filter, or swscale
  // mmprof's resize: the AVX2 horizontal pass where the CPU has it (the same bytes).
  bool simd = true;
  // Larger images are refused from their header, before any pixel buffer is allocated. The
  // default is PIL's DecompressionBombError threshold (2 x Image.MAX_IMAGE_PIXELS).
  int max_pixels = 178'956'970;
  // Larger files are refused before a byte is read: a worker reads a whole file into memory to
  // decode it. 256 MiB is an uncompressed RGB image at PIL's warning threshold (89,478,485
  // pixels x 3 bytes), so no image a loader can use is refused by size alone.
  int64_t max_bytes = 256 << 20;
  // A decode that takes longer fails its sample (checked as libjpeg-turbo decodes each row of
  // blocks and each scan); 0 = no budget.
  int max_decode_ms = 10'000;
};

struct VideoConfig {
  int frames = 8;
  DecodeDevice decode_device = DecodeDevice::cpu;  // video.decode_device, else decode.device
  int size = 224;
  VideoSampling sampling = VideoSampling::uniform;
  int decoder_threads = 1;
  // Speed levers (docs/performance.md): keep the codec context open across clips with the same
  // decoder setup; skip non-reference frames presented before the frame wanted.
  bool reuse_decoder = false;
  bool skip_nonref = true;
  int max_pixels = 178'956'970;  // per frame, checked from the stream header
  // Larger files are refused before a byte is read (a worker holds the whole file to decode it):
  // 1 GiB is about 9 minutes of 1080p H.264 at 15 Mbit/s, far more than a training clip.
  int64_t max_bytes = 1 << 30;
  // The decode of one clip (open, seeks, frames) that takes longer fails its sample, checked
  // between packets; 0 = no budget.
  int max_decode_ms = 60'000;
};

// Decode placement (docs/gpu.md). decode.device sets both modalities; image.decode_device and
// video.decode_device (resolved into ImageConfig/VideoConfig) override it per modality, so
// "hybrid" is video.decode_device=gpu with images left on the CPU.
struct DecodeConfig {
  DecodeDevice device = DecodeDevice::cpu;
  GpuDecodeBackend gpu_backend = GpuDecodeBackend::nvdec;
  int staging_mib = 64;  // per batch slot: the compressed bytes workers hand to the main process
};

struct TextConfig {
  int seq_len = 77;
  int max_bytes = 1 << 20;  // longer captions are refused before they are read
};

struct StepConfig {
  StepKind kind = StepKind::none;
  double ms = 0;
  std::optional<std::string> model;
  int accum_steps = 1;
  std::string device = "cpu";
};

struct PhasesConfig {
  int warmup_steps = 10;
  int steps = 100;
  double warmup_s = 0;  // 0 = by steps only; else warm-up lasts at least this long too
  // > 0: after warm-up, a steady-state check over this many blocks of steps (steady.json;
  // experiment/steady_state.hpp); 0 = no check.
  int steady_blocks = 0;
};

struct DistConfig {
  int rank = 0;  // resolved from RANK / WORLD_SIZE when the config says "env"
  int world_size = 1;
  std::string sync = "none";  // none | barrier | allreduce, after each optimizer step
  double allreduce_mb = 25;   // the gradient summed by dist.sync=allreduce
  double timeout_s = 120;     // c10d's rendezvous and collective timeout
};

// Resource sampling (resources.csv, host.csv): the period of the process-tree sampler.
struct MetricsConfig {
  int interval_ms = 100;  // 0 = only at phase boundaries
};

// Event tracing (`mmprof trace`): which batches' samples get spans, and a cap on recorded events.
struct TraceConfig {
  int sample_every = 1;            // per-sample spans for every Nth batch (batch spans always)
  int64_t max_events = 1'000'000;  // recorded events beyond this are counted as dropped
};

struct Config {
  DataConfig data;
  LoaderConfig loader;
  ImageConfig image;
  VideoConfig video;
  TextConfig text;
  DecodeConfig decode;
  StepConfig step;
  PhasesConfig phases;
  DistConfig dist;
  MetricsConfig metrics;
  TraceConfig trace;
};

const char* to_string(StepKind kind) noexcept;

// Whether a modality's samples are decoded in the main process (on the GPU, or its emulation).
bool decodes_on_device(const Config& config, Modality modality) noexcept;

// The default tree with every known key (the schema --set validates against).
nlohmann::json default_config_tree();

// Loads a YAML file over the defaults. Unknown keys and badly typed values throw UsageError
// naming the file and key.
nlohmann::json load_config_tree(const std::string& yaml_path);
// The same from YAML text; `where` names its origin in error messages.
nlohmann::json parse_config_yaml(const std::string& yaml_text, const std::string& where);

// Applies "a.b=c" (c parsed as YAML scalar, typed by the default's type). Throws UsageError.
void apply_override(nlohmann::json& tree, const std::string& assignment);

// Resolves "env" fields (dist.rank, dist.world_size from RANK/WORLD_SIZE), validates ranges and
// converts to the typed struct. Throws UsageError naming the key.
Config resolve_config(nlohmann::json& tree);

}  // namespace mmprof
