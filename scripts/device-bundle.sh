#!/usr/bin/env bash
# Prepares .device/, what the lent GPU machine needs and lacks, for scripts/device-check.sh.
# Runs HERE (Debian 12, CUDA toolkit at /usr/local/cuda). The GPU machine has CUDA, torch and a
# newer glibc but none of mmprof's Debian libraries (FFmpeg, turbojpeg, libarchive, hwloc,
# yaml-cpp, ...) and no package registry, so we carry:
#   .device/bin/    mmprof (Release, stripped), the CUPTI injection library and the planted-schedule
#                   program when their targets exist
#   .device/libs.tar.xz   lib/: our libcupti.so.13 and the binaries' shared-library closure
#                   (ldd) without the C/C++ runtime (glibc, libstdc++, libgcc_s, libm, ...): the
#                   target's own are newer and mixing two glibcs breaks. Only libraries the
#                   binaries NEED transitively.
#   .device/MANIFEST      what is in it, sizes, and the commit it was built from
# The lead carries it with carry: [".device"]; the whole carried tree must stay under 64 MiB.
# Usage: scripts/device-bundle.sh [BUILD_DIR]          configure BUILD_DIR (default build/device)
#                                                     as Release with CUDA and build there
#        scripts/device-bundle.sh --reuse BUILD_DIR  take an already configured CUDA build as it
#                                                     is (any build type: binaries are stripped)
set -euo pipefail
cd "$(dirname "$0")/.."
reuse=0
if [[ ${1:-} == --reuse ]]; then
  reuse=1
  shift
  [[ -f ${1:-}/CMakeCache.txt ]] || { echo "device-bundle: --reuse needs a configured build folder" >&2; exit 2; }
fi
build=${1:-build/device}
out=.device
limit_bytes=$((64 * 1024 * 1024))

say() { printf 'device-bundle: %s\n' "$*"; }

# 1. The Release build with CUDA (no libtorch: the GPU machine builds the torch plugin against
#    its own CUDA libtorch; no tests or benchmarks).
if ((reuse)); then
  grep -q '^MMPROF_HAVE_CUDA' "$build/CMakeCache.txt" || grep -q 'CUDAToolkit_FOUND' "$build/CMakeCache.txt" ||
    say "warning: $build may lack CUDA"
else
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMMPROF_WITH_CUDA=ON -DMMPROF_WITH_TORCH=OFF \
    -DMMPROF_BUILD_TESTS=OFF -DMMPROF_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
fi
targets=(mmprof)
available=$(cmake --build "$build" --target help | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p')
# gpucore's targets, when they have landed: the injection library and the planted program.
for t in mmprof_cupti_inject gpu_planted mmprof_gpu_planted; do
  grep -qx "$t" <<<"$available" && targets+=("$t")
done
say "building ${targets[*]} in $build"
cmake --build "$build" -j"${JOBS:-2}" --target "${targets[@]}"

# 2. The binaries.
rm -rf "$out"
mkdir -p "$out/bin" "$out/stage/lib"
cp "$build/src/mmprof" "$out/bin/"
find "$build" -type f \( -name 'libmmprof_cupti_inject.so' -o -name 'gpu_planted' \
  -o -name 'mmprof_gpu_planted' \) -exec cp {} "$out/bin/" \;
strip --strip-unneeded "$out"/bin/*
cupti=$(ls /usr/local/cuda/lib64/libcupti.so.13 /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13 \
  2>/dev/null | head -n1 || true)
if [[ -n "$cupti" ]]; then
  cp -L "$cupti" "$out/stage/lib/libcupti.so.13"
else
  say "warning: no libcupti.so.13 found; the GPU machine's own will be used"
fi

# 3. The shared-library closure of every carried binary, minus the C/C++ runtime.
runtime='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|ld-linux-x86-64|linux-vdso|libcuda|libnvidia-ml)\.so'
for f in "$out"/bin/*; do
  ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r soname path; do
  if [[ "$soname" =~ $runtime ]]; then continue; fi
  [[ "$path" == "$PWD/$out/"* ]] && continue
  cp -L "$path" "$out/stage/lib/$soname"
done
strip --strip-unneeded "$out"/stage/lib/*.so* 2>/dev/null || true
raw=$(du -sb "$out/stage/lib" | cut -f1)
say "closure: $(ls "$out/stage/lib" | wc -l) libraries, $((raw / 1024 / 1024)) MiB uncompressed"
# 48 MiB blocks, so -T2 really uses two threads (-9's default block is 192 MiB, more than it all).
tar -C "$out/stage" -cf - lib | xz -9 -T2 --block-size=48MiB >"$out/libs.tar.xz"
rm -rf "$out/stage"

# 4. Exclude it from git (the lead carries it explicitly) and write the manifest.
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qsx '/.device/' "$exclude" || echo '/.device/' >>"$exclude"
{
  echo "built_from: $(git rev-parse HEAD 2>/dev/null || echo unknown) (+ working tree $(date -u +%FT%TZ))"
  echo "build: $build Release MMPROF_WITH_CUDA=ON"
  (cd "$out" && ls -l bin libs.tar.xz | awk 'NF > 5 {print $5, $NF}')
  echo "libs.tar.xz holds:"
  tar -tJf "$out/libs.tar.xz" | sed -n 's|^lib/||p' | tr '\n' ' '
  echo
} >"$out/MANIFEST"

# 5. The carried tree: tracked and untracked-but-not-ignored files plus .device.
tree_bytes=$(git ls-files -co --exclude-standard -z | xargs -0 -r stat -c %s 2>/dev/null |
  awk '{s += $1} END {print s + 0}')
device_bytes=$(du -sb "$out" | cut -f1)
total=$((tree_bytes + device_bytes))
say "carried: working tree $((tree_bytes / 1024)) KiB + .device $((device_bytes / 1024)) KiB = $((total / 1024 / 1024)) MiB (limit 64 MiB)"
cat "$out/MANIFEST"
if ((total >= limit_bytes)); then
  say "error: the carried tree is over 64 MiB; prune $out/libs.tar.xz"
  exit 1
fi
