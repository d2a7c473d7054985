#pragma once
// What a user's job ran with, as its manifest records it. A job does not read mmprof's
// configuration: its manifest's "config" holds only the settings that observe it (metrics.*,
// trace.*, phases.steps, phases.warmup_steps) and, once the hook described it, the followed
// DataLoader's own arguments under mmprof's key names (loader.batch_size = its batch_size), never
// the stand-in loader's defaults. Its "data" is the dataset its loader library streams from, as
// the index that library's writer left beside the shards says it (docs/external-hook.md).
#include <nlohmann/json.hpp>

namespace mmprof::external {

// `tree`: mmprof's resolved configuration; `dataloader`: the hook's description (the summary's
// job.dataloader: loaders[], one of them followed), or null before the job ran. loader is null
// when no DataLoader was followed; a key the job's DataLoader lacks (in_order before torch 2.6)
// is null.
nlohmann::json job_config_tree(const nlohmann::json& tree, const nlohmann::json& dataloader);

// The dataset of the followed loader's library when it keeps an index on local disk: MosaicML
// Streaming's MDS index.json (shards[].samples, raw_data and zip_data bytes) and LitData's
// index.json (chunks[].chunk_size and chunk_bytes), summed over the library's local locations:
// {layout, library, paths, index_files, shards, samples, total_bytes, why_incomplete}; the
// figures null (and why_incomplete saying why) when no location has a readable index yet. Null
// when the followed loader's dataset is of no such library.
nlohmann::json streamed_dataset(const nlohmann::json& dataloader);

}  // namespace mmprof::external
