#include "cli/shard.hpp"

#include <cstdio>
#include <filesystem>

#include "cli/usage.hpp"
#include "measure/progress.hpp"

namespace mmprof::cli {

void setup_shard(CLI::App& app, ShardCliOptions& o) {
  add_source_options(app, o.source, o.layout, "Dataset to shard");
  app.add_option("--out,-o", o.reshard.out, "Folder of the new shards (written whole, then moved)")
      ->required();
  app.add_option("--shard-mb", o.shard_mb, "Shard size in MB (10^6 bytes), about")->check(above(0));
  auto* by_size = app.add_flag("--by-size", o.by_size,
                               "Balance the shards by bytes (the default): equal work per rank");
  app.add_flag("--by-count", o.by_count, "Balance the shards by samples instead")
      ->excludes(by_size);
  app.add_flag("--force", o.reshard.force, "Replace an --out that exists (once the new is whole)");
  add_json_flag(app, o.json, "shards.json");
  add_verbosity_flags(app, o.verbosity);
}

int run_shard_command(ShardCliOptions o) {
  const Dataset source = session::open_source(o.source, o.layout);
  o.reshard.shard_bytes = static_cast<uint64_t>(o.shard_mb * 1e6);
  o.reshard.balance = o.by_count ? gen::ShardBalance::count : gen::ShardBalance::bytes;
  ProgressLine progress(session::progress_style(o.verbosity, o.json));
  o.reshard.progress = [&progress](size_t done, size_t total) {
    progress.update("shard", static_cast<int64_t>(done), static_cast<int64_t>(total), 0, "samples");
  };
  const auto manifest = gen::reshard(source, o.reshard);
  progress.finish();
  if (o.json) {
    print_json(manifest);
  } else if (!o.verbosity.quiet) {
    std::printf("shards: %s (%zu samples in %zu shards, largest/smallest %.2f; shards.json)\n",
                std::filesystem::absolute(o.reshard.out).c_str(), manifest["samples"].get<size_t>(),
                manifest["shards"].size(),
                manifest["largest_over_smallest"].is_number()
                    ? manifest["largest_over_smallest"].get<double>()
                    : 0.0);
  }
  const size_t dropped = manifest["source_rejected"].get<size_t>();
  if (dropped > 0) {
    std::fprintf(stderr,
                 "mmprof: warning: %zu member(s) of the source were refused by its index and are "
                 "not in the shards; mmprof inspect --data %s lists them\n",
                 dropped, o.source.c_str());
  }
  return 0;
}

}  // namespace mmprof::cli
