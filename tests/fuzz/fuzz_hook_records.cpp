// libFuzzer target: a hook file of a user's job (hook-<pid>.jsonl, written by Python code that
// runs inside the job, so any bytes). Every input reads into records or is refused with an
// InputError naming the file and line; every record's section is a proc line of the file; and
// what the report asks of the records (a process's identity, the exception that ended the job)
// never fails on what was read.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "external/hook_records.hpp"
#include "mmprof/error.hpp"

namespace {

const std::filesystem::path& hook_dir() {
  static const std::filesystem::path dir = [] {
    auto d =
        std::filesystem::temp_directory_path() / ("mmprof-fuzz-hook-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

template <typename Records>
void check_sections(const Records& records, const mmprof::external::HookRecords& all) {
  for (const auto& r : records) {
    if (r.section != -1 && all.section(r.section) == nullptr) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using mmprof::external::HookRecords;
  {
    std::ofstream out(hook_dir() / "hook-4242.jsonl", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  HookRecords records;
  try {
    records = mmprof::external::read_hook_dir(hook_dir());
  } catch (const mmprof::InputError&) {
    return 0;
  }
  check_sections(records.loaders, records);
  check_sections(records.batches, records);
  check_sections(records.fetches, records);
  check_sections(records.exceptions, records);
  if (const auto who = mmprof::external::identify(records, 4242)) (void)who->to_json();
  (void)mmprof::external::job_exception(records);
  return 0;
}
