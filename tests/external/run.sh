#!/bin/sh
# Runs the external-hook tests (Python unittest, planted jobs as subprocesses).
# Exit status: 0 when every test passed (skips allowed), non-zero otherwise.
#
#   tests/external/run.sh [--torch 2|1.13] [--module NAME] [unittest args...]
#       e.g.  --torch 2 --module test_hook_timing -k Wait
#
# --torch picks the torch the jobs run on (MMPROF_TEST_TORCH): 2, the venv of
# scripts/install-deps --torch2 (scripts/torch2-python); 1.13, Debian's /usr/bin/python3. Without
# it, the first interpreter that imports torch among $MMPROF_TEST_PYTHON, the interpreter running
# the tests and /usr/bin/python3. --module runs one test_*.py file (default: all of them). The
# tests themselves run under $PYTHON, else the first of /usr/bin/python3 and python3 found.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = --torch ]; then
  MMPROF_TEST_TORCH=$2
  export MMPROF_TEST_TORCH
  shift 2
fi
py=${PYTHON:-}
if [ -z "$py" ]; then
  for cand in /usr/bin/python3 python3; do
    if command -v "$cand" >/dev/null 2>&1; then py=$cand; break; fi
  done
fi
[ -n "$py" ] || { echo "run.sh: no python3 found" >&2; exit 2; }
cd "$here"
exec "$py" "$here/run_suite.py" "$@"
