#!/usr/bin/env bash
# The installed CMake package end to end (ctest PackageConsumer, tests/CMakeLists.txt): installs
# the build tree into a temporary prefix, checks the layout, builds tests/package/consumer against
# it with find_package(mmprof) and runs it on a checked-in run directory; then builds the Debian
# package with cpack and checks it installs and runs. Nothing is downloaded.
#
#   consumer_test.sh BUILD_DIR CMAKE SOURCE_DIR [configure arguments for the consumer...]
#
# From the environment (set by the test): MMPROF_PACKAGE_EXE, the installed mmprof relative to the
# prefix; MMPROF_PACKAGE_FILES, the files the install must hold (':'-separated, relative);
# MMPROF_PACKAGE_TORCH_PLUGIN, the installed torch plugin (empty when not built), which the
# installed mmprof has to find; MMPROF_PACKAGE_CPACK, cpack, to build the Debian package too.
# MMPROF_PACKAGE_STEP_TIMEOUT bounds each step (seconds, 540: a hung step, not a loaded machine;
# cpack took over 240 s with clang-tidy and ctest -j2 sharing 2 cores; ctest stops the whole at 600).
set -euo pipefail

if [[ $# -lt 3 ]]; then
  echo "usage: $0 BUILD_DIR CMAKE SOURCE_DIR [consumer configure arguments...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd) cmake=$2 src=$(cd "$3" && pwd)
shift 3
step_timeout=${MMPROF_PACKAGE_STEP_TIMEOUT:-540}
exe_rel=${MMPROF_PACKAGE_EXE:-bin/mmprof}
fixture=$src/tests/fixtures/report/run-input-bound

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmprof-package.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# step NAME COMMAND...: runs COMMAND under the timeout with its output in $tmp/NAME.log, shown
# (the end of it) only when it fails.
step() {
  local name=$1 rc=0
  shift
  echo "+ $*"
  timeout --kill-after=10 "$step_timeout" "$@" >"$tmp/$name.log" 2>&1 || rc=$?
  if ((rc != 0)); then
    tail -n 100 "$tmp/$name.log" >&2
    ((rc == 124 || rc == 137)) && fail "$name: timed out after ${step_timeout}s"
    fail "$name: exited $rc"
  fi
}

# 1. Install.
step install "$cmake" --install "$build" --prefix "$prefix"

# 2. The layout: every expected file, and a package that does not point back into the trees.
missing=()
IFS=: read -r -a expected <<<"${MMPROF_PACKAGE_FILES:-$exe_rel}"
for rel in "${expected[@]}"; do
  [[ -z $rel || -f $prefix/$rel ]] || missing+=("$rel")
done
for header in "$src"/src/*/include/mmprof/*.hpp; do
  [[ -n $(find "$prefix" -path "*/include/mmprof/${header##*/}" -type f) ]] ||
    missing+=("include/mmprof/${header##*/}")
done
if ((${#missing[@]})); then
  (cd "$prefix" && find . -type f | sort) >&2
  fail "not installed: ${missing[*]}"
fi
config=$(find "$prefix" -name mmprofConfig.cmake -type f)
[[ -n $config ]] || fail "no mmprofConfig.cmake under $prefix"
cmakedir=$(dirname "$config")
for f in mmprofConfigVersion.cmake mmprofTargets.cmake; do
  [[ -f $cmakedir/$f ]] || fail "no $f next to $config"
done
# The layers' include views (BUILD_DIR/layers/) and any other build or source path must stay out.
if leaks=$(grep -rnF -e "$build" -e "$src" "$cmakedir"); then
  echo "$leaks" >&2
  fail "the installed package refers to the build or source tree"
fi

# 3. The installed executable runs, and finds the installed torch plugin.
step version "$prefix/$exe_rel" --version
if [[ -n ${MMPROF_PACKAGE_TORCH_PLUGIN:-} ]]; then
  step inspect env -u MMPROF_TORCH_PLUGIN "$prefix/$exe_rel" inspect --json
  want="\"plugin\": \"$prefix/$MMPROF_PACKAGE_TORCH_PLUGIN\""
  if ! grep -qF "$want" "$tmp/inspect.log"; then
    grep -n -A4 '"libtorch"' "$tmp/inspect.log" >&2 || true
    fail "the installed mmprof does not find the installed torch plugin (want $want)"
  fi
fi

# 4. A consumer project: find_package(mmprof) from the prefix only, built.
step configure "$cmake" -S "$src/tests/package/consumer" -B "$tmp/consumer" \
  "-DCMAKE_PREFIX_PATH=$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF "$@"
found=$(sed -n 's/^mmprof_DIR:PATH=//p' "$tmp/consumer/CMakeCache.txt")
[[ $found == "$cmakedir" ]] || fail "the consumer found mmprof at '$found', not at $cmakedir"
step build "$cmake" --build "$tmp/consumer" --parallel 2

# 5. It reads the checked-in run directory (linked with mmprof::rundir, and with mmprof::core) ...
expected_output='steps 60
phase compute 20
phase end_to_end 20
phase pipeline 20
status complete'
for consumer in consumer consumer_core; do
  step "run-$consumer" "$tmp/consumer/$consumer" "$fixture"
  if [[ $(cat "$tmp/run-$consumer.log") != "$expected_output" ]]; then
    diff -u <(echo "$expected_output") "$tmp/run-$consumer.log" >&2 || true
    fail "unexpected output of $consumer on $fixture"
  fi
done
# ... and reports a folder that is not a run as mmprof's InputError (exit 3).
rc=0
timeout "$step_timeout" "$tmp/consumer/consumer" "$tmp" >"$tmp/not-a-run.log" 2>&1 || rc=$?
if ((rc != 3)) || ! grep -q "manifest.json" "$tmp/not-a-run.log"; then
  cat "$tmp/not-a-run.log" >&2
  fail "the consumer on a folder without a run exited $rc (want 3, naming manifest.json)"
fi

# 6. The Debian package (cmake/MmprofPackage.cmake): built, its dependencies resolvable on this
# Debian (apt-get's simulation, which also refuses a malformed package), unpacked into a scratch
# root where its mmprof runs and finds its own torch plugin and configurations.
if [[ -n ${MMPROF_PACKAGE_CPACK:-} ]]; then
  step cpack "$MMPROF_PACKAGE_CPACK" --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/deb"
  debs=("$tmp"/deb/mmprof_*.deb)
  deb=${debs[0]}
  [[ -f $deb ]] || fail "cpack made no mmprof_*.deb in $tmp/deb"
  step deb-info dpkg-deb --field "$deb" Depends
  for lib in libavcodec libturbojpeg0 libyaml-cpp; do
    grep -q "$lib" "$tmp/deb-info.log" || fail "the package's Depends lacks $lib: $(cat "$tmp/deb-info.log")"
  done
  step deb-simulate apt-get install --simulate --no-install-recommends "$deb"
  grep -q "^Inst mmprof " "$tmp/deb-simulate.log" || fail "apt-get would not install $deb"
  step deb-unpack dpkg-deb -x "$deb" "$tmp/root"
  step deb-version "$tmp/root/usr/bin/mmprof" --version
  [[ -f $tmp/root/usr/share/mmprof/configs/default.yaml ]] || fail "the package has no configs"
  step deb-man man -l "$tmp/root/usr/share/man/man1/mmprof.1"
  grep -q "mmprof baseline" "$tmp/deb-man.log" || fail "the packaged man page has no 'mmprof baseline' section"
  if [[ -n ${MMPROF_PACKAGE_TORCH_PLUGIN:-} ]]; then
    step deb-inspect env -u MMPROF_TORCH_PLUGIN "$tmp/root/usr/bin/mmprof" inspect --json
    grep -qF "\"plugin\": \"$tmp/root/usr/$MMPROF_PACKAGE_TORCH_PLUGIN\"" "$tmp/deb-inspect.log" ||
      fail "the packaged mmprof does not find its torch plugin $tmp/root/usr/$MMPROF_PACKAGE_TORCH_PLUGIN"
  fi
fi

echo "PASS: mmprof installed into a prefix and used by a consumer project"
