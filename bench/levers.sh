#!/usr/bin/env bash
# The speed levers of issue 7, each an `mmprof ab` arm against the default configuration
# (protocol: bench/README.md, "levers"; results: docs/performance.md, "Levers"). Two experiments
# on the speed bench's datasets (`make speed-bench` generates them):
#   images: loader.buffer_reuse, loader.pin_workers, image.resizer, loader.huge_pages,
#           image.dct_scaling, image.crop_decode (2 worker processes, batch 32, 224x224 float32);
#   videos: video.skip_nonref, video.reuse_decoder (1 worker, batch 4, 8 frames at 224x224).
# loader.huge_pages needs the hugetlbfs pool to hold the ring: as root this script raises
# vm.nr_hugepages for the images experiment and puts it back after; otherwise that arm is left
# out, said so. Env: BUILD (default build/release), ROUNDS (default 8), WORK (default
# ~/.cache/mmprof/speed-bench), OUT (default a temporary folder).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${BUILD:-build/release}/src/mmprof"
work="${WORK:-$HOME/.cache/mmprof/speed-bench}"
out="${OUT:-$(mktemp -d -t mmprof-levers.XXXXXX)}"
rounds="${ROUNDS:-8}"
for d in "$work/img256/files" "$work/vid24/files"; do
  if [ ! -d "$d" ]; then
    echo "levers: no dataset at $d (run make speed-bench first, or set WORK)" >&2
    exit 2
  fi
done
if [ ! -x "$bin" ]; then
  echo "levers: no mmprof binary at $bin (set BUILD)" >&2
  exit 2
fi

image_factors=(--factor loader.buffer_reuse=true,false --factor loader.pin_workers=false,true
  --factor image.resizer=mmprof,swscale --factor image.dct_scaling=true,false
  --factor image.crop_decode=true,false)
pool_before=$(cat /proc/sys/vm/nr_hugepages)
# The default configuration's ring is 884 MB, 442 huge pages of 2 MiB: its slots are sized for a
# batch of videos at worst, and hugetlbfs reserves all of it when the ring is mapped.
if [ "$(id -u)" -eq 0 ] && echo 460 > /proc/sys/vm/nr_hugepages 2>/dev/null &&
  [ "$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)" -ge 442 ]; then
  trap 'echo "$pool_before" > /proc/sys/vm/nr_hugepages' EXIT
  image_factors+=(--factor loader.huge_pages=false,true)
else
  echo "levers: loader.huge_pages left out (needs root and 442 free huge pages)" >&2
fi

"$bin" ab --data "$work/img256/files" --set phases.steps=24 "${image_factors[@]}" \
  --rounds "$rounds" --warmup-s 0.5 --force --out "$out/images"
"$bin" ab --data "$work/vid24/files" --set phases.steps=24 --set phases.warmup_steps=1 \
  --set loader.batch_size=4 --set loader.num_workers=1 \
  --factor video.skip_nonref=true,false --factor video.reuse_decoder=false,true \
  --rounds "$rounds" --warmup-s 0.5 --force --out "$out/videos"
echo "levers: matrices in $out/images/matrix.md and $out/videos/matrix.md"
