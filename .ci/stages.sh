# Sourced by .ci/run: `stage NAME COMMAND...` runs one stage of CI and prints its wall time with
# the running total; the table of every stage is printed when CI ends, failed or not.
ci_start=$SECONDS
ci_budget_s=3000
ci_stages=()

stage() {
  local name=$1 t0=$SECONDS rc=0
  shift
  echo "::: stage $name: $*"
  "$@" || rc=$?
  local took=$((SECONDS - t0)) status=ok
  ((rc == 0)) || status="FAILED (exit $rc)"
  ci_stages+=("$(printf '%-8s %6d s  %s' "$name" "$took" "$status")")
  echo "::: stage $name: $took s, $status; CI so far $((SECONDS - ci_start)) s of the $ci_budget_s s budget"
  return "$rc"
}

ci_summary() {
  local total=$((SECONDS - ci_start))
  echo "::: CI stages (wall time)"
  printf '%s\n' "${ci_stages[@]}"
  printf '%-8s %6d s  (budget %d s, limit 5400 s)\n' total "$total" "$ci_budget_s"
  ((total <= ci_budget_s)) || echo "::: CI took $total s: over its $ci_budget_s s budget"
}
trap ci_summary EXIT

# The test suites this machine can run, comma-separated (MMPROF_TEST_REQUIRE): a test that would
# skip for want of one of them fails instead (tests/support/test_support.hpp require_or_skip,
# tests/external/hooktest.py). Each is probed the way its tests use it.
ci_capabilities() {
  local caps=()
  unshare -n true 2>/dev/null && command -v ip >/dev/null && caps+=(netns)
  [[ -x /usr/sbin/nginx ]] && caps+=(nginx)
  unshare -m true 2>/dev/null && caps+=(mountns)
  /usr/bin/python3 -c 'import torch' 2>/dev/null && caps+=(torch)
  local t2
  t2=$(./scripts/torch2-python 2>/dev/null) && "$t2" -c 'import torch' 2>/dev/null && caps+=(torch2)
  command -v chromium >/dev/null && caps+=(chromium)
  [[ -x /usr/bin/time ]] && caps+=(time)
  command -v findmnt >/dev/null && caps+=(findmnt)
  [[ $(stat -f -c %T "${TMPDIR:-/tmp}") != tmpfs ]] && caps+=(evictable-tmp)
  grep -qw avx2 /proc/cpuinfo && caps+=(avx2)
  compgen -G '/usr/local/cuda/lib64/libcupti.so*' >/dev/null && caps+=(cupti)
  local IFS=,
  echo "${caps[*]}"
}
