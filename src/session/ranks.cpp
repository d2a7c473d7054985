#include "session/ranks.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

#include "measure/job_summary.hpp"
#include "mmprof/error.hpp"
#include "step/dist_group.hpp"
#include "util/interrupt.hpp"
#include "util/spawn.hpp"

extern char** environ;

namespace mmprof::session {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A port the kernel has just handed out on the loopback, for rank 0's TCPStore (what torchrun
// does for --standalone). Closed before the ranks start: another process could take it in
// between, and then the ranks fail to meet with a clear error.
int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    throw RunError(fmt::format("cannot open a socket for the rendezvous: {}", strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  const int err = errno;
  close(fd);
  if (!ok) throw RunError(fmt::format("cannot find a free port on 127.0.0.1: {}", strerror(err)));
  return ntohs(addr.sin_port);
}

// The rank's command line: this one without --nproc-per-node, with the job directory as --out.
std::vector<std::string> rank_args(const std::vector<std::string>& args, bool has_out,
                                   const fs::path& job) {
  std::vector<std::string> out;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") {
      out.insert(out.end(), args.begin() + static_cast<long>(i), args.end());
      break;
    }
    if (args[i] == "--nproc-per-node") {
      ++i;
      continue;
    }
    if (args[i].rfind("--nproc-per-node=", 0) == 0) continue;
    out.push_back(args[i]);
  }
  if (!has_out) {
    out.push_back("--out");
    out.push_back(job.string());
  }
  return out;
}

std::string how_ended(int status) {
  if (WIFEXITED(status)) return fmt::format("exit {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "ended";
}

int code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

struct Child {
  pid_t pid = -1;
  std::optional<RankExit> exit;
  bool stopped = false;  // by mmprof, after another rank failed
};

pid_t spawn_rank(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                 const fs::path& log, bool inherit_stderr) {
  const Spawned child = spawn({.argv = argv,
                               .program = "/proc/self/exe",
                               .env = env,
                               .inherit_env = false,
                               .stdout_file = log,
                               .stderr_to_stdout = !inherit_stderr});
  if (!child.ok())
    throw RunError(fmt::format("cannot start a rank of mmprof: {}", strerror(child.error)));
  return child.pid;
}

// The environment torchrun gives rank `rank` of `n` on one node.
std::vector<std::string> rank_env(int rank, int n, int port) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    bool ours = false;
    for (const char* name : {"RANK=", "LOCAL_RANK=", "WORLD_SIZE=", "LOCAL_WORLD_SIZE=",
                             "MASTER_ADDR=", "MASTER_PORT=", "GROUP_RANK="})
      ours = ours || kv.rfind(name, 0) == 0;
    if (!ours) env.emplace_back(kv);
  }
  for (const auto& [k, v] : std::initializer_list<std::pair<const char*, std::string>>{
           {"RANK", std::to_string(rank)},
           {"LOCAL_RANK", std::to_string(rank)},
           {"GROUP_RANK", "0"},
           {"WORLD_SIZE", std::to_string(n)},
           {"LOCAL_WORLD_SIZE", std::to_string(n)},
           {"MASTER_ADDR", "127.0.0.1"},
           {"MASTER_PORT", std::to_string(port)}})
    env.push_back(fmt::format("{}={}", k, v));
  return env;
}

// Waits for every rank. Once one failed, the others get dist.timeout_s (their collectives fail
// by then) and a grace period to write what they measured, then SIGTERM, then SIGKILL. Returns
// the rank that failed first, if one did.
std::optional<int> wait_ranks(std::vector<Child>& children, double timeout_s) {
  const double grace_s = timeout_s + 10.0;
  std::optional<int> first;
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> deadline;
  bool termed = false, forwarded = false;
  size_t running = children.size();
  while (running > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (size_t k = 0; k < children.size(); ++k) {
        Child& c = children[k];
        if (c.pid != pid) continue;
        c.exit = RankExit{code_of(status), how_ended(status)};
        if (c.stopped) {
          c.exit->how = fmt::format(
              "stopped by mmprof {:.0f} s after rank {} failed, still "
              "running (hung?): {}",
              grace_s, first.value_or(-1), c.exit->how);
        }
        --running;
        if (c.exit->code != 0 && !first) {
          first = static_cast<int>(k);
          deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(grace_s * 1000));
        }
      }
      continue;
    }
    if (interrupted() && !forwarded) {  // a SIGINT for the launcher alone reaches the ranks too
      for (const Child& c : children)
        if (!c.exit) kill(c.pid, SIGINT);
      forwarded = true;
    }
    if (deadline && Clock::now() > *deadline) {
      for (Child& c : children) {
        if (c.exit) continue;
        kill(c.pid, termed ? SIGKILL : SIGTERM);
        c.stopped = true;
      }
      deadline = Clock::now() + std::chrono::seconds(5);
      termed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return first;
}

}  // namespace

BaselineOutcome launch_ranks(const BaselineRequest& o, const std::vector<std::string>& args,
                             const std::string& command) {
  const int n = *o.nproc_per_node;
  if (!o.command.empty()) {
    throw UsageError(
        "--nproc-per-node starts ranks of mmprof's loader; a job starts its own: mmprof baseline "
        "-- torchrun --nproc-per-node N train.py");
  }
  if (!o.resume.empty()) throw UsageError("--resume continues one run, not a job of ranks");
  const char* world = std::getenv("WORLD_SIZE");
  if (world != nullptr && *world != '\0' && std::string(world) != "1") {
    throw UsageError(fmt::format(
        "--nproc-per-node starts its own ranks, but WORLD_SIZE={} is already set (under torchrun, "
        "run mmprof baseline without --nproc-per-node)",
        world));
  }
  // The configuration is resolved here too, so a bad --set fails once, not once per rank.
  const ResolvedRun r = resolve_run(o.run);
  const fs::path job = fs::absolute(o.run.out.empty() ? default_out_dir(command) : o.run.out);
  std::error_code ec;
  fs::create_directories(job, ec);
  if (ec) {
    throw OutputError(
        fmt::format("cannot create the job directory {}: {}", job.string(), ec.message()));
  }
  const int port = free_loopback_port();
  std::vector<Child> children(static_cast<size_t>(n));
  std::vector<std::string> argv = rank_args(args, !o.run.out.empty(), job);
  argv.insert(argv.begin(), args.front());
  if (progress_style(o.run.verbosity, o.json) != ProgressStyle::none) {
    std::fprintf(stderr,
                 "mmprof: starting %d ranks (c10d rendezvous on 127.0.0.1:%d); logs in %s\n", n,
                 port, job.c_str());
  }
  for (int k = 0; k < n; ++k) {
    children[static_cast<size_t>(k)].pid =
        spawn_rank(argv, rank_env(k, n, port), job / fmt::format("rank-{}.log", k), k == 0);
  }
  const std::optional<int> first = wait_ranks(children, r.config.dist.timeout_s);
  std::map<int, RankExit> exits;
  for (int k = 0; k < n; ++k)
    exits[k] = *children[static_cast<size_t>(k)].exit;
  if (first) exits[*first].first = true;
  BaselineOutcome outcome{
      .kind = BaselineOutcome::Kind::job, .document = merge_job(job, n, exits), .dir = job};
  // The first rank to fail gives the job's exit code (a signal is a failure, 1).
  if (first) {
    const int code = exits[*first].code;
    outcome.exit_code = code >= 128 ? static_cast<int>(ExitCode::failure) : code;
  } else if (outcome.document["status"] != "complete") {
    outcome.exit_code = static_cast<int>(ExitCode::failure);
  }
  return outcome;
}

RankJob::RankJob() = default;
RankJob::~RankJob() = default;
RankJob::RankJob(RankJob&&) noexcept = default;

RankJob join_job(const Config& config, const json& tree, uint64_t dataset_fingerprint,
                 const fs::path& requested) {
  const DistEnv env = dist_env_from(
      std::getenv("MASTER_ADDR"), std::getenv("MASTER_PORT"), std::getenv("LOCAL_RANK"),
      std::getenv("TORCHELASTIC_USE_AGENT_STORE"), config.dist.rank, config.dist.world_size);
  if (config.phases.steady_blocks > 0) {
    throw UsageError(
        "phases.steady_blocks (mmprof ab's steady-state check) needs one rank: each "
        "rank would settle after its own number of steps");
  }
  RankJob j;
  j.group = make_torch_dist_group(config, env);
  // Every rank must measure the same thing: the resolved configuration but for the rank, and
  // the dataset's fingerprint.
  json mine = tree;
  mine["dist"].erase("rank");
  mine["dataset_fingerprint"] = fmt::format("{:016x}", dataset_fingerprint);
  const std::vector<std::string> all = j.group->gather_text(mine.dump());
  const json first = json::parse(all.front());
  for (size_t k = 1; k < all.size(); ++k) {
    const json patch = json::diff(first, json::parse(all[k]));
    if (patch.empty()) continue;
    const json& op = patch.front();
    const std::string at = op.value("path", "");
    throw UsageError(fmt::format(
        "rank {} runs another configuration or dataset than rank 0 ({} differs: {} on rank 0, {} "
        "on rank {}); every rank of a job must be started with the same --set, --config and --data",
        k, at,
        first.contains(json::json_pointer(at)) ? first[json::json_pointer(at)].dump() : "absent",
        op.contains("value") ? op["value"].dump() : "absent", k));
  }
  j.job = j.group->from_rank0(
      fs::absolute(requested.empty() ? fs::path(default_out_dir("baseline")) : requested).string());
  j.out = rank_dir(j.job, config.dist.rank);
  return j;
}

json finish_job(RankJob& j, bool ok) {
  if (ok) j.group->barrier();  // every rank's directory is whole before rank 0 reads them
  if (j.group->rank() != 0) return nullptr;
  return merge_job(j.job, j.group->world_size(), {});
}
}  // namespace mmprof::session
