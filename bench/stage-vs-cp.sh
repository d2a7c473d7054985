#!/usr/bin/env bash
# `mmprof stage` against GNU cp -r (+ sync) on the same dataset, the source's pages evicted
# before every copy (protocol: bench/README.md, "stage-vs-cp"). Env: BUILD (default
# build/release), DATA (default ~/.cache/mmprof/default-v1/files), REPS (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${BUILD:-build/release}/src/mmprof"
data="${DATA:-$HOME/.cache/mmprof/default-v1/files}"
reps="${REPS:-5}"
work=$(mktemp -d /var/tmp/mmprof-stage-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
evict() {  # the source cold again: its pages written back and dropped (no root needed)
  find "$1" -type f -print0 | xargs -0 -r /usr/bin/python3 -c '
import os, sys
for f in sys.argv[1:]:
    fd = os.open(f, os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)'
}
now() { date +%s.%N; }
evict "$data"; "$bin" stage --quiet "$data" "$work/warm-up"; rm -rf "$work/warm-up"  # warm-up
for i in $(seq "$reps"); do
  rm -rf "$work/a" "$work/b"; sync; evict "$data"
  t0=$(now); "$bin" stage --quiet "$data" "$work/a"; t1=$(now)
  sync; evict "$data"
  t2=$(now); cp -r "$data" "$work/b"; sync -f "$work/b"; t3=$(now)
  awk -v a="$(echo "$t1 - $t0" | bc)" -v b="$(echo "$t3 - $t2" | bc)" -v i="$i" \
    'BEGIN { printf "pair %d: mmprof stage %.3f s, cp -r + sync %.3f s, cp/stage %.3f\n", i, a, b, b / a }'
done
