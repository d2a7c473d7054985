#!/usr/bin/env bash
# The planted-schedule check of GPU idle time (issue 4's device check; needs a GPU).
#
# Usage: scripts/check-planted.sh OUT_DIR [mmprof_gpu_planted options...]
#   Runs tools/gpu_planted's program (default: 10 kernels x 5 ms, 5 ms host gaps, 64 MB pinned
#   and pageable H2D copies) under CUDA_INJECTION64_PATH=libmmprof_cupti_inject.so, then
#   `mmprof inspect EVENTS --planted PLAN`, which compares the idle time mmprof measures with
#   the planted one. OUT_DIR receives planted-plan.json (the program's stdout), planted-events.jsonl
#   (the injection library's events), planted-stderr.txt and planted-check.txt.
# Binaries (environment; the defaults fit .device/bin of scripts/device-bundle.sh):
#   BIN (./.device/bin), MMPROF ($BIN/mmprof), INJECT ($BIN/libmmprof_cupti_inject.so),
#   PLANTED ($BIN/mmprof_gpu_planted); MM_LD: LD_LIBRARY_PATH for mmprof alone.
#   From a build tree: MMPROF=B/src/mmprof INJECT=B/src/gpu/inject/libmmprof_cupti_inject.so
#   PLANTED=B/tools/gpu_planted/mmprof_gpu_planted scripts/check-planted.sh OUT
# MMPROF_CUPTI_LIB picks the libcupti the injection library loads; MMPROF_PLANTED_TOLERANCE the
# relative tolerance (default 0.02).
# Exit status: 0 when measured idle (and data-wait idle) are within the tolerance of the plan;
# 1 when not; 3 when a binary is missing, 4 when no events were recorded (one line on stderr).
# The last three lines printed are the idle and data-wait rows and the result.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  sed -n '4,19p' "$0" >&2
  exit 2
fi
out=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/.device/bin}
MMPROF=${MMPROF:-$BIN/mmprof}
INJECT=${INJECT:-$BIN/libmmprof_cupti_inject.so}
PLANTED=${PLANTED:-$BIN/mmprof_gpu_planted}
for f in "$MMPROF" "$INJECT" "$PLANTED"; do
  if [[ ! -f $f ]]; then
    echo "check-planted: $f not found (set MMPROF, INJECT, PLANTED or BIN; see the usage)" >&2
    exit 3
  fi
done
mkdir -p "$out"
events=$out/planted-events.jsonl
rm -f "$events"
status=0
CUDA_INJECTION64_PATH=$(realpath "$INJECT") MMPROF_GPU_EVENTS=$events \
  "$PLANTED" "$@" >"$out/planted-plan.json" 2>"$out/planted-stderr.txt" || status=$?
cat "$out/planted-stderr.txt" >&2
if ((status != 0)); then
  echo "check-planted: $PLANTED exited $status (see $out/planted-stderr.txt)" >&2
  exit "$status"
fi
if [[ ! -s $events ]]; then
  echo "check-planted: the injection library wrote no events to $events (see $out/planted-stderr.txt)" >&2
  exit 4
fi
status=0
LD_LIBRARY_PATH=${MM_LD:-${LD_LIBRARY_PATH:-}} "$MMPROF" inspect "$events" \
  --planted "$out/planted-plan.json" --tolerance "${MMPROF_PLANTED_TOLERANCE:-0.02}" \
  >"$out/planted-check.txt" 2>&1 || status=$?
cat "$out/planted-check.txt"
echo "--"
grep -E ' (ok|FAIL)$' "$out/planted-check.txt" || true
grep -E '^  result: ' "$out/planted-check.txt" || echo "  result: mmprof inspect exited $status"
exit "$status"
