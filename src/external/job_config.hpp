#pragma once
// What a user's job ran with, as its manifest records it. A job does not read mmprof's
// configuration: its manifest's "config" holds only the settings that observe it (metrics.*,
// trace.*, phases.steps, phases.warmup_steps) and, once the hook described it, the followed
// DataLoader's own arguments under mmprof's key names (loader.batch_size = its batch_size), never
// the stand-in loader's defaults. Its "data" (and "data_mix") is the dataset its loader reads, as
// the dataset's library or folder says it (job_dataset below, docs/external-hook.md).
#include <nlohmann/json.hpp>
#include <string>

namespace mmprof::external {

// `tree`: mmprof's resolved configuration; `dataloader`: the hook's description (the summary's
// job.dataloader: loaders[], one of them followed), or null before the job ran. loader is null
// when no DataLoader was followed; a key the job's DataLoader lacks (in_order before torch 2.6)
// is null.
nlohmann::json job_config_tree(const nlohmann::json& tree, const nlohmann::json& dataloader);

// The dataset the followed loader reads, when the hook's description locates it on local disk:
// - MosaicML Streaming's MDS index.json (shards[].samples, raw_data and zip_data bytes) and
//   LitData's index.json (chunks[].chunk_size and chunk_bytes), summed over the library's local
//   locations: data = {layout "mds"/"litdata", library, paths, index_files, shards, samples,
//   total_bytes, why_incomplete};
// - a Hugging Face datasets Dataset: its num_rows and its Arrow cache files, each a shard, sized
//   on disk: data = {layout "arrow", library, paths, shards, samples, total_bytes,
//   why_incomplete};
// - a WebDataset whose shard list names local files of one folder: those shards opened as mmprof
//   opens its own tar shards (Dataset::open_shards; summary() with library "webdataset") and
//   their data mix probed from the members' headers; data_reason says why not otherwise (a
//   shard streamed from a URL, shards in several folders);
// - a dataset with a folder root (an ImageFolder): the folder opened as mmprof opens its own
//   (Dataset::summary(): layout, files, samples, images, videos, bytes, per extension) with
//   library null and root_of the dataset's class, and its data mix probed from the headers
//   (env::data_mix), as the stand-in's manifest has them.
// In the first two, figures are null (and why_incomplete says why) when no location can be read.
// All null when the followed loader's dataset is none of these; data_reason says why a folder
// root could not be opened.
struct JobDataset {
  nlohmann::json data = nullptr, data_mix = nullptr;
  std::string data_reason;
};
JobDataset job_dataset(const nlohmann::json& dataloader);

}  // namespace mmprof::external
