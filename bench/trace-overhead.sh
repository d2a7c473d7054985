#!/usr/bin/env bash
# What tracing costs: `mmprof trace` against `mmprof baseline` on the same configuration,
# interleaved, REPS >= 5 repetitions; medians, min-max and the per-pair throughput ratio
# (protocol: bench/README.md, "trace-overhead"). Env: BUILD (default build/release), REPS
# (default 7), STEPS (measured steps per phase, default 30), WORK (run directories; default a
# temporary folder). Further arguments go to both arms, e.g. --data DIR --set step.kind=sleep.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${BUILD:-build/release}/src/mmprof"
reps="${REPS:-7}"
work="${WORK:-$(mktemp -d -t mmprof-trace-overhead.XXXXXX)}"
if [ "$reps" -lt 5 ]; then
  echo "trace-overhead: REPS must be at least 5 (got $reps)" >&2
  exit 2
fi
if [ ! -x "$bin" ]; then
  echo "trace-overhead: no mmprof binary at $bin (set BUILD)" >&2
  exit 2
fi
args=(--set "phases.steps=${STEPS:-30}" --set phases.warmup_steps=5 "$@")

run_arm() {  # arm, run directory
  "$bin" "$1" "${args[@]}" --json --out "$2" >/dev/null
}

# One warm-up of each arm (page cache, the embedded dataset on first use), not reported.
run_arm baseline "$work/warmup-baseline"
run_arm trace "$work/warmup-trace"
# Interleaved, alternating which arm goes first, so drift and the order both hit both arms.
for i in $(seq 1 "$reps"); do
  if [ $((i % 2)) -eq 1 ]; then order="baseline trace"; else order="trace baseline"; fi
  for arm in $order; do
    run_arm "$arm" "$work/$arm-$i"
  done
done

python3 - "$work" "$reps" <<'PY'
import json, statistics, sys
work, reps = sys.argv[1], int(sys.argv[2])

def summary(arm, i):
    with open(f"{work}/{arm}-{i}/summary.json") as f:
        return json.load(f)

def rate(s, phase):
    v = s["throughput"][phase]["samples_per_s"]
    return v if isinstance(v, (int, float)) else None

def line(name, values, fmt):
    return (f"  {name:<22} median {fmt.format(statistics.median(values))}  "
            f"min {fmt.format(min(values))}  max {fmt.format(max(values))}")

runs = [(summary("baseline", i), summary("trace", i)) for i in range(1, reps + 1)]
print(f"trace overhead: {reps} interleaved pairs, run directories in {work}")
for phase in ("pipeline", "end_to_end"):
    pairs = [(rate(b, phase), rate(t, phase)) for b, t in runs]
    if any(b is None or t is None for b, t in pairs):
        continue
    print(f"{phase} samples/s:")
    print(line("baseline", [b for b, _ in pairs], "{:9.1f}"))
    print(line("trace", [t for _, t in pairs], "{:9.1f}"))
    ratios = [t / b for b, t in pairs]
    print(line("trace / baseline", ratios, "{:9.4f}"))
    print(f"  overhead (1 - median ratio): {100 * (1 - statistics.median(ratios)):.2f}%")
t = [tr["trace"] for _, tr in runs]
print("trace.json: median {} events, {} dropped (max_events {}), sample_every {}".format(
    int(statistics.median(x["events"] for x in t)), max(x["dropped_events"] for x in t),
    t[0]["max_events"], t[0]["sample_every"]))
PY
