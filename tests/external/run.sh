#!/bin/sh
# Runs the external-hook tests (Python unittest, planted jobs as subprocesses).
# Exit status: 0 when every test passed (skips allowed), non-zero otherwise.
#
#   tests/external/run.sh [unittest args...]      e.g.  -k Stop   or  -v
#
# The jobs run under the first interpreter that can import torch among
# $MMPROF_TEST_PYTHON, the interpreter running the tests, and /usr/bin/python3
# (Debian's torch).  The tests themselves run under $PYTHON, else the first of
# /usr/bin/python3 and python3 found.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-}
if [ -z "$py" ]; then
  for cand in /usr/bin/python3 python3; do
    if command -v "$cand" >/dev/null 2>&1; then py=$cand; break; fi
  done
fi
[ -n "$py" ] || { echo "run.sh: no python3 found" >&2; exit 2; }
cd "$here"
exec "$py" -m unittest discover -s "$here" -p 'test_*.py' "$@"
