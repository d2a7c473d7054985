#include "mmprof/dataset_layout.hpp"

#include <algorithm>
#include <cctype>

namespace mmprof {

const std::vector<DatasetLayout>& dataset_layouts() {
  // {id, name, gen_folder, containers, container_ext, holder}
  static const std::vector<DatasetLayout> kLayouts = {
      {Layout::files, "files", "files", false, "", "media file"},
      {Layout::tar, "tar", "shards", true, "tar", "top-level .tar shard"},
  };
  return kLayouts;
}

const DatasetLayout& dataset_layout(Layout layout) {
  const auto& all = dataset_layouts();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const DatasetLayout& l) { return l.id == layout; });
  return it == all.end() ? all.front() : *it;
}

std::optional<Layout> layout_named(const std::string& name) {
  if (name == "auto") return Layout::auto_detect;
  for (const DatasetLayout& l : dataset_layouts())
    if (name == l.name) return l.id;
  return std::nullopt;
}

bool is_container(const DatasetLayout& layout, const std::string& rel) {
  const std::string ext = std::string(".") + layout.container_ext;
  if (!layout.containers || rel.find('/') != std::string::npos || rel.size() <= ext.size())
    return false;
  return std::equal(ext.begin(), ext.end(), rel.end() - static_cast<long>(ext.size()),
                    [](char a, char b) {
                      return std::tolower(static_cast<unsigned char>(a)) ==
                             std::tolower(static_cast<unsigned char>(b));
                    });
}

std::string member_location(const DatasetLayout& layout, const std::string& file,
                            const std::string& key, const std::string& ext) {
  return layout.containers ? file + ":" + key + "." + ext : file;
}

}  // namespace mmprof
