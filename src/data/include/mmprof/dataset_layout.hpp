#pragma once
// The dataset layouts mmprof reads, one row each: where a layout's samples are in a folder, how
// they and their bytes are named and counted. Code asks a dataset's row (Dataset::layout_info()),
// never which layout it is. A new layout (MDS shards, LitData chunks) is a row of
// dataset_layouts(), its Layout value and data.layout choice (config), and for containers other
// than tar their scanner (data/dataset_store.hpp); docs/architecture.md has the recipe.
#include <optional>
#include <string>
#include <vector>

#include "mmprof/config.hpp"

namespace mmprof {

struct DatasetLayout {
  Layout id = Layout::files;
  const char* name = "";        // data.layout's value; the manifest's and summary's data.layout
  const char* gen_folder = "";  // its copy in a folder of `mmprof gen --layout both`
  // Samples are members of container files (shards), not files of their own: a member is named
  // "shard:key.ext", a key's extension starts at the first dot of the member's name
  // (WebDataset's rule; in a folder of files at the last dot), and the bytes on storage are the
  // containers' sizes, headers and padding included.
  bool containers = false;
  const char* container_ext = "";  // a container is a top-level file "*.<ext>" ("tar")
  const char* holder = "";         // what holds a sample, for messages ("top-level .tar shard")
};

// Every layout; data.layout=auto chooses among them by what the folder holds (the first when no
// container layout holds more).
const std::vector<DatasetLayout>& dataset_layouts();
// `layout`'s row; Layout::auto_detect, not a layout of its own, is the first row's.
const DatasetLayout& dataset_layout(Layout layout);
// The layout of data.layout's value `name` ("auto": Layout::auto_detect); nullopt for none.
std::optional<Layout> layout_named(const std::string& name);
// A folder's file `rel` is one of `layout`'s containers (a top-level *.tar).
bool is_container(const DatasetLayout& layout, const std::string& rel);
// Where a sample's member is, as messages and errors.jsonl name it: the file, or
// "shard:key.ext" inside a container.
std::string member_location(const DatasetLayout& layout, const std::string& file,
                            const std::string& key, const std::string& ext);

}  // namespace mmprof
