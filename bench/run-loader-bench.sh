#!/usr/bin/env bash
# Runs the loader efficiency benchmark on the embedded default images (see bench/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD:-build/release}"
"$build/bench/mmprof_loader_bench" "${REPS:-5}" "${WORKERS:-2}" "${EPOCHS:-1}"
