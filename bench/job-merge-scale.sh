#!/usr/bin/env bash
# `mmprof report JOB` over a job of RANKS synthetic ranks (protocol: bench/README.md,
# "job-merge-scale"): wall time and peak RSS of the merge and the report, against reading every
# rank's files once (cat, the I/O floor) and, with OLD_BUILD, against another build of mmprof.
# Env: BUILD (default build/release), OLD_BUILD (none), RANKS (4096), STEPS (200), REPS (3),
# WORK (a fresh folder under /var/tmp; ranks 2.. are hard links of rank 1, about 4 MB in all).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(realpath "${BUILD:-build/release}")/src/mmprof"
old=${OLD_BUILD:+$(realpath "$OLD_BUILD")/src/mmprof}
ranks="${RANKS:-4096}"
reps="${REPS:-3}"
work=${WORK:-$(mktemp -d /var/tmp/mmprof-merge-bench.XXXXXX)}
trap '[[ -n ${WORK:-} ]] || rm -rf "$work"' EXIT
if [[ ! -f $work/job/job.json ]]; then
  "$bin" baseline --nproc-per-node 2 --set dist.sync=allreduce --set step.kind=sleep \
    --set step.ms=5 --steps "${STEPS:-200}" --quiet --out "$work/two"
  mkdir -p "$work/job"
  cp "$work/two/job.json" "$work/job/"
  cp -al "$work/two/rank-0" "$work/job/rank-0"
  for k in $(seq 1 $((ranks - 1))); do cp -al "$work/two/rank-1" "$work/job/rank-$k"; done
  python3 -c 'import json, sys; p = sys.argv[1]; j = json.load(open(p)); j["world_size"] = int(sys.argv[2]); json.dump(j, open(p, "w"))' \
    "$work/job/job.json" "$ranks"
fi
echo "job: $ranks ranks, $(du -sh --apparent-size "$work/two/rank-1" | cut -f1) per rank," \
  "$(wc -l < "$work/two/rank-1/stages.csv") stages.csv rows and $(wc -l < "$work/two/rank-1/steps.csv") steps.csv rows each"
timed() {  # NAME CMD...: one line "NAME wall_s peak_rss_kb"
  local name=$1; shift
  /usr/bin/time -f "$name %e %M" -o "$work/time" "$@" > /dev/null
  cat "$work/time"
}
arms() {
  timed new "$bin" report "$work/job" --out "$work/report-new" --quiet
  [[ -z $old ]] || timed old "$old" report "$work/job" --out "$work/report-old" --quiet
  timed cat bash -c 'cat "$1"/job/rank-*/* > /dev/null' - "$work"
}
arms > /dev/null  # warm-up: the page cache holds every rank's files
for i in $(seq "$reps"); do arms; done > "$work/times"
python3 - "$work/times" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
arms = {}
for name, wall, rss in rows:
    arms.setdefault(name, []).append((float(wall), int(rss) / 1024))
for name in sorted(arms):
    w = [x[0] for x in arms[name]]; m = [x[1] for x in arms[name]]
    print(f"{name:4} wall {statistics.median(w):.2f} s ({min(w):.2f}-{max(w):.2f})  "
          f"peak RSS {statistics.median(m):.0f} MiB ({min(m):.0f}-{max(m):.0f})")
def ratio(a, b, label):  # per round: the arms of one round ran side by side
    if a not in arms or b not in arms: return
    r = [x[0] / y[0] for x, y in zip(arms[a], arms[b])]
    print(f"{label} per round: median {statistics.median(r):.2f}x ({min(r):.2f}-{max(r):.2f}x)")
ratio("new", "cat", "new / cat")
ratio("old", "new", "old / new")
PY
