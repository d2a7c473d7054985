#pragma once
// The boundary between mmprof and its libtorch plugin (libmmprof_torch_step.so).
//
// Why a C ABI and not a C++ `Step*`: the plugin is built against whatever libtorch is at hand
// (Debian's 1.13 with GCC 12, or a pip wheel's libtorch built by another compiler, possibly with
// another _GLIBCXX_USE_CXX11_ABI), so nothing that depends on the C++ standard library's layout
// (std::string, std::vector, exceptions, vtables) crosses it. Only plain structs of fixed-size
// fields, C function pointers and NUL-terminated strings do; every plugin entry point catches all
// exceptions and returns a status with a message instead.
//
// Compatibility: bump MMPROF_TORCH_ABI_VERSION on any change to these structs or signatures. Both
// sides check it (params.abi_version, vtable->abi_version) and refuse a mismatch.
#include <stddef.h>
#include <stdint.h>

#define MMPROF_TORCH_ABI_VERSION 2u
#define MMPROF_TORCH_FACTORY_SYMBOL "mmprof_torch_step_create"
#define MMPROF_TORCH_DIST_FACTORY_SYMBOL "mmprof_torch_dist_create"

extern "C" {

// Values mirror mmprof::ExitCode so the host maps them to its error classes one to one.
enum MmprofTorchStatus : int32_t {
  MMPROF_TORCH_OK = 0,
  MMPROF_TORCH_FAILURE = 1,      // the step failed while running (RunError)
  MMPROF_TORCH_USAGE = 2,        // a bad step.model / step.device / parameter (UsageError)
  MMPROF_TORCH_UNAVAILABLE = 4,  // asked for something this libtorch or machine lacks (CUDA)
};

enum MmprofTorchDType : int32_t {
  MMPROF_TORCH_UINT8 = 0,    // pixels 0..255, the step scales them to [0, 1]
  MMPROF_TORCH_FLOAT32 = 1,  // pixels already normalised by the loader
};

struct MmprofTorchStepParams {
  uint32_t abi_version;  // MMPROF_TORCH_ABI_VERSION
  const char* model;     // "small_cnn"
  const char* device;    // "cpu", "cuda" or "cuda:N"
  int32_t accum_steps;   // micro-batches per optimizer step (>= 1)
  int32_t num_threads;   // intra-op threads (>= 1)
  int32_t dtype;         // MmprofTorchDType of images and videos
  int32_t image_size;    // S of images: n x 3 x S x S
  int32_t video_frames;  // T of videos: n x T x 3 x Sv x Sv
  int32_t video_size;    // Sv
  uint64_t seed;         // model initialisation and synthetic inputs
};

// One micro-batch, as views into the loader's memory (valid for the duration of run()).
// A null images (videos) pointer with n_images (n_videos) > 0 asks for a synthetic input of that
// shape held by the step: the compute-ceiling phase runs on such batches.
struct MmprofTorchBatch {
  uint32_t n_images;
  uint32_t n_videos;
  const void* images;           // n_images x 3 x S x S
  const void* videos;           // n_videos x T x 3 x Sv x Sv
  const int64_t* image_labels;  // n_images class ids in [0, 10)
  const int64_t* video_labels;  // n_videos class ids in [0, 10)
};

struct MmprofTorchRunResult {
  double loss;      // mean loss of this micro-batch before the update (NaN if it had no input)
  int32_t stepped;  // 1 when this micro-batch completed an optimizer step
};

// The step object: `self` is opaque to the host and owned by it until destroy().
struct MmprofTorchStepVTable {
  uint32_t abi_version;
  // Runs forward, backward and (every accum_steps calls) the optimizer step; returns when done.
  // On failure writes a NUL-terminated message of at most error_size bytes.
  MmprofTorchStatus (*run)(void* self, const MmprofTorchBatch* batch, MmprofTorchRunResult* result,
                           char* error, size_t error_size);
  // One line for the manifest; owned by the step, valid until destroy().
  const char* (*describe)(const void* self);
  // Never fails.
  void (*destroy)(void* self);
};

struct MmprofTorchStepHandle {
  const MmprofTorchStepVTable* vtable;
  void* self;
};

// The plugin's one export. On success fills *out; on failure writes a message to error.
typedef MmprofTorchStatus (*MmprofTorchStepCreateFn)(const MmprofTorchStepParams* params,
                                                     MmprofTorchStepHandle* out, char* error,
                                                     size_t error_size);

// The rank's process group (c10d): a TCPStore rendezvous at master_addr:master_port (rank 0 serves
// it, as torchrun's ranks do), then ProcessGroupGloo, or ProcessGroupNCCL for a CUDA device.
struct MmprofTorchDistParams {
  uint32_t abi_version;       // MMPROF_TORCH_ABI_VERSION
  int32_t rank;               // RANK
  int32_t world_size;         // WORLD_SIZE
  const char* master_addr;    // MASTER_ADDR
  int32_t master_port;        // MASTER_PORT
  int32_t serve_store;        // 1: rank 0 serves the TCPStore; 0: it is there already (the
                              // agent store of a torchrun with TORCHELASTIC_USE_AGENT_STORE)
  const char* backend;        // "gloo" or "nccl"
  int32_t local_rank;         // LOCAL_RANK: the CUDA device of an nccl group
  double timeout_s;           // rendezvous and every collective: a dead or hung peer fails it
  uint64_t allreduce_floats;  // the gradient-sized buffer allreduce_gradient() sums
};

// Every call is a collective: each rank makes the same calls in the same order.
struct MmprofTorchDistVTable {
  uint32_t abi_version;
  MmprofTorchStatus (*barrier)(void* self, char* error, size_t error_size);
  // Sums the gradient-sized buffer across ranks (what DDP does once per optimizer step).
  MmprofTorchStatus (*allreduce_gradient)(void* self, char* error, size_t error_size);
  // values[0..n) becomes the element-wise maximum over ranks.
  MmprofTorchStatus (*allreduce_max)(void* self, int64_t* values, uint32_t n, char* error,
                                     size_t error_size);
  // Each rank gives `size` bytes; `all` (world_size x size bytes) gets every rank's, by rank.
  MmprofTorchStatus (*allgather)(void* self, const void* mine, uint64_t size, void* all,
                                 char* error, size_t error_size);
  // buffer[0..size) becomes rank 0's on every rank.
  MmprofTorchStatus (*broadcast)(void* self, void* buffer, uint64_t size, char* error,
                                 size_t error_size);
  // One line for the manifest ("gloo over 127.0.0.1:29500, 2 ranks"); valid until destroy().
  const char* (*describe)(const void* self);
  void (*destroy)(void* self);
};

struct MmprofTorchDistHandle {
  const MmprofTorchDistVTable* vtable;
  void* self;
};

typedef MmprofTorchStatus (*MmprofTorchDistCreateFn)(const MmprofTorchDistParams* params,
                                                     MmprofTorchDistHandle* out, char* error,
                                                     size_t error_size);

}  // extern "C"
