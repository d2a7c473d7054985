#!/usr/bin/env bash
# The device check of issues 4 and 19, run ONCE on the lent GPU machine from the repository root,
# with .device/ carried (made here by scripts/device-bundle.sh). Results go to $OUT (default
# ./device-out), 6 files (the device tool returns 8 at most): summary.txt, a_env.log,
# h_decode.log and i_hook.log as they are, logs.tar.gz (every part's log) and runs.tar.gz (the run directories).
#
#   a_env       nvidia-smi, the libraries found, `mmprof inspect` (provenance, GPUs), dataset gen
#   b_gemm_pinned    mmprof baseline, step.kind=gemm (~20 ms), loader.pin_memory=true, CUPTI
#   c_gemm_pageable  the same with loader.pin_memory=false: the pinned/pageable H2D A/B
#   d_planted   gpucore's planted schedule through the injection library: idle within 2%
#   e_pytorch   the injection library on an unmodified PyTorch script; `mmprof inspect EVENTS`
#   f_trace     `mmprof trace` with gemm, when that subcommand exists
#   g_torch     the torch step plugin built against the machine's CUDA libtorch, step.device=cuda
#   h_decode    mmprof's loader decoding on the GPU (nvJPEG / NVDEC) and its placement ab
#   i_hook      the main use: `mmprof baseline -- python3 job.py` on the machine's torch 2.x with
#               CUDA, pinned and pageable, against the job's own planted schedule (CUDA events)
#
# Every part is independent (a failure never stops the others), runs under its own timeout and
# ends its log with one "RESULT: PASS|FAIL ..." line; the summary of all parts is printed last.
# The whole script stays under DEVICE_CHECK_BUDGET_S (default 540 s): a part that would start
# too late is skipped and says so. Without a GPU every part fails fast with "unavailable: ...".
set -u
cd "$(dirname "$0")/.."
export ROOT=$PWD
export OUT=${OUT:-$ROOT/device-out}
mkdir -p "$OUT"
export WORK
WORK=$(mktemp -d /tmp/mmprof-device.XXXXXX)
export DEVICE=$ROOT/.device
export BIN=$DEVICE/bin
export MMPROF=$BIN/mmprof
export INJECT=$BIN/libmmprof_cupti_inject.so
export DATA=$WORK/data
export RUNS=$WORK/runs
export LOGS=$WORK/logs
mkdir -p "$RUNS" "$LOGS"
budget=${DEVICE_CHECK_BUDGET_S:-540}
t_begin=$SECONDS

# Common settings of the measured runs: short, but past warm-up and with enough steps for
# percentiles (step.ms 20 x 60 steps ~ 1.2 s per phase).
export RUN_SETTINGS="--set phases.warmup_steps=5 --set phases.steps=60 --set loader.batch_size=16
  --set loader.num_workers=6 --set metrics.interval_ms=50"

# ---- setup: unpack the carried libraries; find cuBLAS, CUPTI and torch on this machine -------
setup() {
  echo "== setup $(date -u +%FT%TZ) on $(hostname)"
  if [[ ! -x $MMPROF ]]; then
    echo "unavailable: $MMPROF is missing (run scripts/device-bundle.sh and carry .device)"
    return 1
  fi
  mkdir -p "$WORK/lib"
  if [[ -f $DEVICE/libs.tar.xz ]]; then
    tar -C "$WORK" -xJf "$DEVICE/libs.tar.xz" || echo "warning: unpacking libs.tar.xz failed"
  fi
  echo "carried libraries: $(ls "$WORK/lib" | wc -l)"
  # cuBLAS: the toolkit's, else the pip wheels' (nvidia/cu13/lib, nvidia/cublas/lib).
  local py_nvidia
  py_nvidia=$(python3 -c 'import nvidia, os; print(" ".join(list(nvidia.__path__)))' 2>/dev/null)
  CUBLAS=$(find -L /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib $py_nvidia \
    -maxdepth 3 -name 'libcublas.so.1[0-9]*' 2>/dev/null | sort | head -n1)
  export CUBLAS
  echo "cuBLAS: ${CUBLAS:-not found}"
  [[ -n $CUBLAS ]] && export MMPROF_CUBLAS_LIB=$CUBLAS
  # CUPTI is loaded by soname (libcupti.so.13), never by path: a process whose libtorch_cuda has
  # already mapped the wheel's copy must reuse it, since two CUPTIs in one process conflict. Ours
  # (carried) is found through the library path when nothing else has loaded one.
  unset MMPROF_CUPTI_LIB
  echo "CUPTI: $(ls "$WORK/lib/libcupti.so.13" 2>/dev/null || echo 'not carried'), by soname"
  # mmprof alone sees the carried Debian libraries; Python and torch never do.
  MM_LD=$WORK/lib:$BIN
  [[ -n $CUBLAS ]] && MM_LD=$MM_LD:$(dirname "$CUBLAS")
  export MM_LD
  # The injection library's own dependencies (libfmt, ...), alone in a folder for Python runs.
  mkdir -p "$WORK/inject_lib"
  if [[ -f $INJECT ]]; then
    LD_LIBRARY_PATH=$MM_LD ldd "$INJECT" | awk -v w="$WORK/lib/" '$3 ~ "^" w {print $3}' |
      while read -r lib; do ln -sf "$lib" "$WORK/inject_lib/"; done
    [[ -f $WORK/lib/libcupti.so.13 ]] && ln -sf "$WORK/lib/libcupti.so.13" "$WORK/inject_lib/"
  fi
  echo "injection library: $( [[ -f $INJECT ]] && echo "$INJECT" || echo 'not carried')"
  if LD_LIBRARY_PATH=$MM_LD ldd "$MMPROF" | grep 'not found'; then
    echo "error: mmprof has unresolved libraries (above)"
  fi
  return 0
}

mm() { LD_LIBRARY_PATH=$MM_LD "$MMPROF" "$@"; }
export -f mm

# A Python helper both summaries use: the first value of `key` anywhere in nested JSON.
export PYTHONPATH=$WORK/py${PYTHONPATH:+:$PYTHONPATH}
mkdir -p "$WORK/py"
cat >"$WORK/py/devcheck.py" <<'PY'
def find(d, key):
    if isinstance(d, dict):
        if key in d: return d[key]
        for v in d.values():
            r = find(v, key)
            if r is not None: return r
    return None
PY

# Prints "key=value" figures from a run directory's summary.json and manifest.json, and checks
# the gpu block (exit 1 with the reason when it is missing or inconsistent).
check_run() {
  python3 - "$1" "$2" <<'PY'
import json, math, sys, csv, os
run, mode = sys.argv[1], sys.argv[2]
s = json.load(open(os.path.join(run, "summary.json")))
m = json.load(open(os.path.join(run, "manifest.json")))
def g(d, *keys):
    for k in keys:
        if not isinstance(d, dict) or d.get(k) is None: return None
        d = d[k]
    return d
def f(x): return "null" if x is None else (f"{x:.4g}" if isinstance(x, float) else str(x))
from devcheck import find
print("step:", find(m, "training_step"))
print("pin:", find(m, "pin_mode"))
print("status", s.get("status"), "| e2e samples/s", f(g(s, "throughput", "end_to_end", "samples_per_s")),
      "| compute samples/s", f(g(s, "throughput", "compute", "samples_per_s")),
      "| pipeline samples/s", f(g(s, "throughput", "pipeline", "samples_per_s")),
      "| stall_fraction", f(s.get("stall_fraction")))
print("latency_ms.h2d", json.dumps(g(s, "latency_ms", "h2d")))
gpu = s.get("gpu")
print("gpu", json.dumps(gpu, indent=1))
print("gpu_unavailable", s.get("gpu_unavailable"))
rows = list(csv.DictReader(open(os.path.join(run, "steps.csv"))))
e2e = [r for r in rows if r["phase"] == "end_to_end"]
filled = [r for r in e2e if r["h2d_ms"] != ""]
print(f"steps.csv: {len(e2e)} end_to_end rows, {len(filled)} with h2d_ms")
problems = []
if gpu is None:
    problems.append("gpu is null: " + str(s.get("gpu_unavailable")))
else:
    for k in ("idle_fraction", "kernel_busy_fraction", "data_wait_idle_fraction"):
        v = gpu.get(k)
        if v is None or not (0 <= v <= 1): problems.append(f"gpu.{k}={v}")
    h = gpu["h2d"]
    cupti = h.get("mb_per_s_" + mode)
    ev = g(h, "cuda_events", "mb_per_s")
    print(f"H2D {mode}: CUPTI {f(cupti)} MB/s, CUDA events {f(ev)} MB/s, bytes CUPTI {h.get('bytes')} events {g(h, 'cuda_events', 'bytes')}")
    if cupti is None or ev is None: problems.append(f"no {mode} H2D bandwidth")
    elif abs(cupti - ev) / max(cupti, ev) > 0.35: problems.append(f"CUPTI and event H2D MB/s differ by >35%")
    if (gpu.get("cupti") or {}).get("dropped_records"): problems.append("CUPTI dropped records")
if len(filled) != len(e2e) or not e2e: problems.append("steps.csv h2d_ms not filled")
print("CHECK:", "ok" if not problems else "; ".join(problems))
sys.exit(1 if problems else 0)
PY
}
export -f check_run

# ---- the parts ---------------------------------------------------------------------------------
part_a_env() {
  nvidia-smi || echo "nvidia-smi: unavailable"
  nvidia-smi -q -d CLOCK,POWER,PERFORMANCE 2>/dev/null | head -n 60
  mm --version
  echo "== mmprof gen (small dataset: 96 images, 8 short clips)"
  local t0=$SECONDS rc=0
  mm gen --out "$DATA" --images 96 --videos 8 --video-max-s 2 --video-max-height 360 \
    --layout files || rc=1
  local gen_s=$((SECONDS - t0))
  echo "gen: ${gen_s} s"
  echo "== mmprof inspect"
  mm inspect --data "$DATA/files" --out "$WORK/inspect.json" || rc=1
  mm inspect --data "$DATA/files"  # the human-readable form, for the log
  cp "$WORK/inspect.json" "$RUNS/" 2>/dev/null
  local gpus
  gpus=$(python3 -c '
import json, sys
from devcheck import find
d = json.load(open(sys.argv[1]))
print(json.dumps({k: find(d, k) for k in ("gpus", "gpu_unavailable_reason", "cuda", "cupti")},
                 indent=1), file=sys.stderr)
print(len(find(d, "gpus") or []))' "$WORK/inspect.json") || rc=1
  if ((rc == 0 && ${gpus:-0} > 0)); then
    echo "RESULT: PASS inspect lists ${gpus} GPU(s); dataset generated in ${gen_s} s"
  else
    echo "RESULT: FAIL inspect lists ${gpus:-no} GPU(s), or inspect/gen failed (rc $rc)"
    return 1
  fi
}

gemm_run() {  # $1 name, $2 pin_memory, $3 pinned|pageable
  mm baseline --data "$DATA/files" --set step.kind=gemm --set step.ms=20 --set loader.pin_memory="$2" \
    $RUN_SETTINGS --out "$RUNS/$1"
  local rc=$?
  echo "mmprof baseline exit $rc"
  check_run "$RUNS/$1" "$3" || rc=1
  if ((rc == 0)); then
    echo "RESULT: PASS $(grep '^H2D' "$LOGS/$1.log" 2>/dev/null | head -n1)"
  else
    echo "RESULT: FAIL $1 (exit $rc) $(grep '^CHECK:' "$LOGS/$1.log" 2>/dev/null | head -n1)"
  fi
  return $rc
}
part_b_gemm_pinned() { gemm_run b_gemm_pinned true pinned; }
part_c_gemm_pageable() { gemm_run c_gemm_pageable false pageable; }

part_d_planted() {
  if [[ ! -x $ROOT/scripts/check-planted.sh ]]; then
    echo "RESULT: FAIL scripts/check-planted.sh has not landed"
    return 1
  fi
  # The injection library's own libraries (inject_lib) for the traced program; MM_LD for mmprof.
  LD_LIBRARY_PATH=$WORK/inject_lib "$ROOT/scripts/check-planted.sh" "$WORK/planted"
  local rc=$?
  cp -r "$WORK/planted" "$RUNS/" 2>/dev/null
  if ((rc == 0)); then echo "RESULT: PASS planted idle within 2% ($(tail -n 3 "$LOGS/d_planted.log" | tr '\n' ' '))"
  else echo "RESULT: FAIL check-planted.sh exit $rc"; fi
  return $rc
}

part_e_pytorch() {
  if [[ ! -f $INJECT ]]; then
    echo "RESULT: FAIL the injection library was not carried"
    return 1
  fi
  cat >"$WORK/torch_job.py" <<'PY'
# An unmodified-style PyTorch job: host->device copies (pinned and pageable) and matmuls.
import time, torch
assert torch.cuda.is_available(), "torch sees no GPU"
x_pinned = torch.randn(64, 3, 224, 224).pin_memory()
x_pageable = torch.randn(64, 3, 224, 224)
w = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
for i in range(20):
    a = x_pinned.cuda(non_blocking=True) if i % 2 == 0 else x_pageable.cuda()
    h = a.reshape(64, -1)[:, :4096].half()
    for _ in range(10):
        h = h @ w
    torch.cuda.synchronize()
    time.sleep(0.005)  # a planted host gap per iteration
print("job done:", float(h.float().abs().mean()))
PY
  local events=$WORK/torch-events.jsonl
  # libtorch_cuda maps the wheel's libcupti.so.13 at `import torch`; the injection library then
  # gets that copy by soname (ours in inject_lib is only the fallback).
  CUDA_INJECTION64_PATH=$INJECT MMPROF_GPU_EVENTS=$events LD_LIBRARY_PATH=$WORK/inject_lib \
    python3 "$WORK/torch_job.py"
  local rc=$?
  echo "python exit $rc"
  if [[ ! -s $events ]]; then
    echo "RESULT: FAIL the injection library wrote no events (python exit $rc)"
    return 1
  fi
  ls -l "$events" && head -c 600 "$events" && echo
  cp "$events" "$RUNS/" 2>/dev/null
  mm inspect "$events" || rc=1
  python3 - "$events" <<'PY' || rc=1
import json, sys, collections
lines = open(sys.argv[1]).read().splitlines()
head = json.loads(lines[0]); ev = [json.loads(l) for l in lines[1:]]
c = collections.Counter((e["kind"], e.get("copy")) for e in ev)
print("header", head); print("counts", dict(c))
h2d = [e for e in ev if e.get("copy") == "h2d"]
for pinned in (True, False):
    sel = [e for e in h2d if e.get("pinned") == pinned and e["end_ns"] > e["start_ns"]]
    b = sum(e["bytes"] for e in sel); t = sum(e["end_ns"] - e["start_ns"] for e in sel)
    print(f"h2d pinned={pinned}: {len(sel)} copies, {b/1e6:.1f} MB, {b/1e3/t if t else float('nan'):.0f} MB/s")
kernels = sum(1 for e in ev if e["kind"] == "kernel")
assert head.get("events") == len(ev), "event count mismatch (truncated file)"
assert kernels >= 200, f"expected >= 200 matmul kernels, got {kernels}"
assert len(h2d) >= 20, f"expected >= 20 H2D copies, got {len(h2d)}"
PY
  if ((rc == 0)); then echo "RESULT: PASS $(grep '^h2d pinned=True' "$LOGS/e_pytorch.log" | head -n1)"
  else echo "RESULT: FAIL injection on PyTorch (see log)"; fi
  return $rc
}

part_f_trace() {
  if ! mm trace --help >/dev/null 2>&1; then
    echo "RESULT: FAIL mmprof trace has not landed"
    return 1
  fi
  mm trace --data "$DATA/files" --set step.kind=gemm --set step.ms=20 --set loader.pin_memory=true \
    $RUN_SETTINGS --out "$RUNS/f_trace"
  local rc=$?
  python3 - "$RUNS/f_trace/trace.json" <<'PY' || rc=1
import json, sys, collections
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"] if isinstance(t, dict) else t
c = collections.Counter(e.get("ph") for e in ev)
names = collections.Counter(e.get("cat", "") for e in ev)
print("events by phase type", dict(c)); print("by category", dict(names.most_common(12)))
# docs/trace.md: GPU activity is on processes named "GPU d"; otherData counts it.
gpu_pids = {e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name" and e["args"]["name"].startswith("GPU ")}
gpu = collections.Counter(e.get("cat") for e in ev if e.get("ph") == "X" and e.get("pid") in gpu_pids)
print("GPU events by kind", dict(gpu), "otherData", t.get("otherData"))
assert t["otherData"]["gpu_events"] > 0 and gpu["kernel"] > 0, "no GPU kernels in the trace"
assert any(e.get("args", {}).get("copy") == "h2d" for e in ev if e.get("pid") in gpu_pids), "no H2D copy in the trace"
PY
  ls -l "$RUNS/f_trace" 2>/dev/null
  if ((rc == 0)); then echo "RESULT: PASS trace.json with GPU events"
  else echo "RESULT: FAIL mmprof trace exit/check $rc"; fi
  return $rc
}

# The torch plugin builds in the background from the start (16 cores), part g only waits for it.
# Compiled directly against the wheel's headers and libraries (no CMake package lookup, which
# needs a matching CUDA toolkit layout); libtorch_cuda is linked with --no-as-needed, or the CUDA
# backend would not be registered and torch::cuda::is_available() would say false.
build_torch_plugin() {
  local torch_dir abi
  torch_dir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))') || return 1
  abi=$(python3 -c 'import torch; print(int(torch.compiled_with_cxx11_abi()))') || return 1
  echo "torch at $torch_dir, _GLIBCXX_USE_CXX11_ABI=$abi"
  mkdir -p "$WORK/torch_plugin"
  ${CXX:-g++} -std=c++17 -O2 -fPIC -shared -fvisibility=hidden -D_GLIBCXX_USE_CXX11_ABI="$abi" \
    -I"$ROOT/src" -isystem "$torch_dir/include" \
    -isystem "$torch_dir/include/torch/csrc/api/include" \
    "$ROOT/src/step/torch/torch_step.cpp" -o "$WORK/torch_plugin/libmmprof_torch_step.so" \
    -L"$torch_dir/lib" -Wl,-rpath,"$torch_dir/lib" -Wl,--no-as-needed -ltorch_cuda -lc10_cuda \
    -Wl,--as-needed -ltorch -ltorch_cpu -lc10 -Wl,--no-undefined
}
export -f build_torch_plugin

part_g_torch() {
  echo "== plugin build log"
  while [[ ! -f $WORK/torch_plugin.done ]] && kill -0 "$TORCH_BUILD_PID" 2>/dev/null; do sleep 2; done
  cat "$WORK/torch_plugin.log" 2>/dev/null | tail -n 30
  local so=$WORK/torch_plugin/libmmprof_torch_step.so
  if [[ ! -f $so ]]; then
    echo "RESULT: FAIL the torch plugin did not build against this machine's libtorch"
    return 1
  fi
  MMPROF_TORCH_PLUGIN=$so mm baseline --data "$DATA/files" --set step.kind=torch \
    --set step.device=cuda --set loader.pin_memory=true $RUN_SETTINGS --out "$RUNS/g_torch"
  local rc=$?
  python3 -c '
import json, sys; s = json.load(open(sys.argv[1] + "/summary.json"))
print("e2e samples/s", s["throughput"]["end_to_end"]["samples_per_s"], "compute", s["throughput"]["compute"]["samples_per_s"], "stall", s.get("stall_fraction"))
print("gpu", json.dumps(s.get("gpu"))[:800], s.get("gpu_unavailable"))' "$RUNS/g_torch" || rc=1
  if ((rc == 0)); then echo "RESULT: PASS torch step on cuda, $(grep '^e2e' "$LOGS/g_torch.log" | head -n1)"
  else echo "RESULT: FAIL torch step on cuda (exit $rc)"; fi
  return $rc
}

# Decode on the GPU against the CPU placement (issue 19, docs/gpu.md).
part_h_decode() {
  local rc=0
  mm baseline --data "$DATA/files" --set step.kind=gemm --set step.ms=20 \
    --set loader.pin_memory=true --set decode.device=gpu $RUN_SETTINGS --out "$RUNS/h_gpu_decode"
  echo "mmprof baseline (decode.device=gpu) exit $?"
  python3 - "$RUNS/h_gpu_decode" "$RUNS/b_gemm_pinned" <<'PY' || rc=1
import json, os, sys
def load(run):
    f = os.path.join(run, "summary.json")
    return json.load(open(f)) if os.path.exists(f) else {}
gpu, cpu = load(sys.argv[1]), load(sys.argv[2])
def at(d, *keys):
    for k in keys:
        d = d.get(k) if isinstance(d, dict) else None
    return d
def cores(s):
    procs = at(s, "cpu", "phases", "pipeline", "per_process") or []
    return round(sum(p.get("cores") or 0 for p in procs if p.get("role") in ("main", "worker")), 2)
p = gpu.get("decode_placement") or {}
print("decode_placement", json.dumps(p, indent=1))
for name, s in (("gpu placement", gpu), ("cpu placement (part b)", cpu)):
    print(f"{name}: pipeline {at(s, 'throughput', 'pipeline', 'samples_per_s')} samples/s, "
          f"end_to_end {at(s, 'throughput', 'end_to_end', 'samples_per_s')}, loader cores "
          f"{cores(s)}, h2d p50 {at(s, 'latency_ms', 'h2d', 'p50')} ms, compute inflation "
          f"{at(s, 'decode_placement', 'compute_inflation', 'pct')} %")
problems = []
if gpu.get("status") != "complete":
    problems.append(f"status {gpu.get('status')}: {gpu.get('message')}")
if not str(p.get("where", "")).startswith("main process decodes images and video: nvdec"):
    problems.append(f"not decoded by nvdec: {p.get('where')}")
print("cpu fallbacks:", p.get("cpu_fallbacks"), p.get("cpu_fallback_reason"))
print("CHECK:", "ok" if not problems else "; ".join(problems))
sys.exit(1 if problems else 0)
PY
  mm ab --data "$DATA/files" --factor decode.device=cpu,gpu --set step.kind=gemm --set step.ms=20 \
    --set phases.warmup_steps=3 --set phases.steps=20 --set loader.batch_size=16 \
    --set loader.num_workers=6 --rounds 6 --out "$RUNS/h_ab_placement" || rc=1
  mm report "$RUNS/h_ab_placement" --out "$RUNS/h_ab_placement/report" >/dev/null || rc=1
  python3 - "$RUNS/h_ab_placement/experiment.json" <<'PY' || rc=1
import json, sys
e = json.load(open(sys.argv[1]))
for r in e.get("results", []):
    print("arm", r.get("arm"), "verdict", r.get("verdict"), "effect %", r.get("effect_pct"),
          "correctness", json.dumps(r.get("correctness")))
PY
  sed -n '/^### Decode placement/,/^Medians/p' "$RUNS/h_ab_placement/report/report.md"
  if ((rc == 0)); then echo "RESULT: PASS $(grep '^gpu placement' "$LOGS/h_decode.log" | head -n1)"
  else echo "RESULT: FAIL decode on the GPU ($(grep '^CHECK:' "$LOGS/h_decode.log" | head -n1))"; fi
  return $rc
}

part_i_hook() {
  # A torch 2.x job with a planted schedule: 1 worker makes each batch of 16 items (2 ms each)
  # slower than a step, so the job waits for data; each step copies the batch to the GPU
  # (non_blocking, pinned when asked), keeps the GPU busy with 4096^3 matmuls (CUDA events) and
  # then sleeps 6 ms on the host with the GPU idle. The job's own figures per batch go to OWN.
  cat >"$WORK/hook_job.py" <<'PY'
import json, sys, time, torch
from torch.utils.data import DataLoader, Dataset
own, pin = open(sys.argv[1], "w"), sys.argv[2] == "pinned"
class Items(Dataset):
    def __len__(self): return 100000
    def __getitem__(self, i):
        time.sleep(0.002)
        return torch.full((3, 224, 224), float(i % 7))
if __name__ == "__main__":
    assert torch.cuda.is_available(), "torch sees no GPU"
    loader = DataLoader(Items(), batch_size=16, num_workers=1, pin_memory=pin, prefetch_factor=2)
    w = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    it, i, t_prev = iter(loader), 0, None
    while True:
        t_step = time.perf_counter()
        if t_prev is not None:  # the previous step ran from its next() to this one
            own.write(json.dumps({"i": i - 1, "step_ms": (t_step - t_prev) * 1e3, **rec}) + "\n")
            own.flush()
        t0 = time.perf_counter()
        batch = next(it)
        t1 = time.perf_counter()
        start.record()
        x = batch.cuda(non_blocking=True)
        h = w * x.view(-1)[0].half()  # the step's work depends on its batch
        for _ in range(60):  # 60 x 137 GFLOP: about 15-20 ms on an H100/H200
            h = torch.tanh(h @ w)
        end.record()
        torch.cuda.synchronize()
        rec = {"wait_ms": (t1 - t0) * 1e3, "busy_ms": start.elapsed_time(end),
               "bytes": batch.numel() * batch.element_size(), "pinned": batch.is_pinned()}
        time.sleep(0.006)
        t_prev, i = t_step, i + 1
PY
  local rc=0 mode
  for mode in pinned pageable; do
    MMPROF_HOOK_PYTHONPATH=$ROOT/src/external/python MMPROF_CUPTI_INJECT=$INJECT \
      mm baseline --warmup-steps 10 --steps 60 --out "$RUNS/i_hook_$mode" -- \
      env LD_LIBRARY_PATH="$WORK/inject_lib" python3 "$WORK/hook_job.py" "$WORK/own_$mode.jsonl" "$mode"
    echo "mmprof baseline -- python3 hook_job.py $mode: exit $?"
    cp "$WORK/own_$mode.jsonl" "$RUNS/i_hook_$mode/" 2>/dev/null
    python3 - "$RUNS/i_hook_$mode" "$WORK/own_$mode.jsonl" "$mode" <<'PY' || rc=1
import json, os, statistics, sys
run, own_path, mode = sys.argv[1:4]
s = json.load(open(os.path.join(run, "summary.json")))
own = [json.loads(l) for l in open(own_path) if l.strip()]
def at(d, *keys):
    for k in keys:
        d = d.get(k) if isinstance(d, dict) else None
    return d
gpu, problems = s.get("gpu"), []
print(mode, "status", s.get("status"), "| hook", at(s, "job", "hook", "status"),
      "| gpu_unavailable", s.get("gpu_unavailable"))
print(mode, "gpu", json.dumps(gpu))
steps = [r for r in own if 10 <= r["i"] < 70]  # the hook's measured batches (after 10 warm-up)
if steps:
    print(f"{mode} wait p50: mmprof {at(s, 'latency_ms', 'wait', 'p50')} ms, job's own "
          f"{statistics.median(r['wait_ms'] for r in steps):.3f} ms; step p50: mmprof "
          f"{at(s, 'latency_ms', 'step', 'p50')} ms, job's own "
          f"{statistics.median(r['step_ms'] for r in steps):.3f} ms ({len(steps)} steps)")
if len(steps) != 60 or gpu is None:
    problems.append(f"{len(steps)} own steps of 60, gpu {s.get('gpu_unavailable')}")
else:
    total = sum(r["step_ms"] for r in steps)
    own_idle = 1 - sum(r["busy_ms"] for r in steps) / total
    own_wait = sum(r["wait_ms"] for r in steps) / total
    own_bytes = sum(r["bytes"] for r in steps)
    h = gpu["h2d"]
    print(f"{mode} GPU idle: mmprof {gpu['idle_fraction']:.4f}, job's own {own_idle:.4f}; "
          f"idle waiting for data: mmprof {gpu['data_wait_idle_fraction']:.4f}, job's own wait "
          f"{own_wait:.4f}; H2D bytes: mmprof {h['bytes']}, job's own {own_bytes} "
          f"({len(steps)} batches); MB/s pinned {h['mb_per_s_pinned']} pageable "
          f"{h['mb_per_s_pageable']}; batches pinned {all(r['pinned'] for r in steps)}")
    if abs(gpu["idle_fraction"] - own_idle) > 0.03: problems.append("GPU idle off by > 3 points")
    if abs(gpu["data_wait_idle_fraction"] - own_wait) > 0.03:
        problems.append("data-wait idle off by > 3 points")
    if abs(h["bytes"] - own_bytes) > steps[0]["bytes"]: problems.append("H2D bytes off by > 1 batch")
    want, other = ("mb_per_s_pinned", "mb_per_s_pageable")[:: 1 if mode == "pinned" else -1]
    if h[want] is None or h[other] is not None: problems.append(f"H2D not all {mode}")
    if (gpu.get("cupti") or {}).get("dropped_records"): problems.append("CUPTI dropped records")
if at(s, "job", "hook", "status") != "ok": problems.append("hook " + str(at(s, "job", "hook", "status")))
print(mode, "CHECK:", "ok" if not problems else "; ".join(problems))
sys.exit(1 if problems else 0)
PY
  done
  if ((rc == 0)); then echo "RESULT: PASS hook on torch $(python3 -c 'import torch; print(torch.__version__)' 2>&1) + CUDA: $(grep 'pinned GPU idle' "$LOGS/i_hook.log" | head -n1)"
  else echo "RESULT: FAIL hook on torch 2.x + CUDA ($(grep 'CHECK:' "$LOGS/i_hook.log" | tr '\n' ' '))"; fi
  return $rc
}

export -f part_a_env gemm_run part_b_gemm_pinned part_c_gemm_pageable part_d_planted \
  part_e_pytorch part_f_trace part_g_torch part_h_decode part_i_hook

# ---- driver --------------------------------------------------------------------------------------
results=()
run_part() {  # name timeout_s
  local name=$1 limit=$2 log=$LOGS/$1.log
  local left=$((budget - (SECONDS - t_begin)))
  if ((left < 15)); then
    echo "RESULT: SKIP the time budget (${budget}s) is spent" >>"$log"
    results+=("SKIP $name: time budget spent")
    return
  fi
  ((limit > left)) && limit=$left
  local t0=$SECONDS
  echo "== $name (timeout ${limit}s)"
  timeout -k 10 "$limit" bash -c "part_$name" >>"$log" 2>&1
  local rc=$?
  ((rc == 124 || rc == 137)) && echo "RESULT: FAIL timed out after ${limit}s" >>"$log"
  local line
  line=$(grep '^RESULT:' "$log" | tail -n1)
  results+=("$(printf '%-16s %4ss  %s' "$name" $((SECONDS - t0)) "${line#RESULT: }")")
  echo "   ${line:-RESULT: FAIL no result line (exit $rc)}"
}

rm -f "$OUT"/[a-i]_*.log "$OUT"/{summary.txt,logs.tar.gz,runs.tar.gz}
setup >"$LOGS/a_env.log" 2>&1
setup_rc=$?
cat "$LOGS/a_env.log"
if ((setup_rc == 0)); then
  (build_torch_plugin >"$WORK/torch_plugin.log" 2>&1; touch "$WORK/torch_plugin.done") &
  export TORCH_BUILD_PID=$!
  run_part a_env 120
  run_part b_gemm_pinned 75
  run_part c_gemm_pageable 75
  run_part d_planted 60
  run_part i_hook 120
  run_part e_pytorch 90
  run_part f_trace 60
  run_part g_torch 150
  run_part h_decode 200
  kill "$TORCH_BUILD_PID" 2>/dev/null
else
  for p in a_env b_gemm_pinned c_gemm_pageable d_planted i_hook e_pytorch f_trace g_torch h_decode; do
    echo "RESULT: FAIL setup failed (see a_env.log)" >>"$LOGS/$p.log"
    results+=("$p  FAIL setup failed")
  done
fi
tar -C "$WORK" -czf "$OUT/runs.tar.gz" runs 2>/dev/null
tar -C "$WORK" -czf "$OUT/logs.tar.gz" logs 2>/dev/null
cp "$LOGS/a_env.log" "$LOGS/h_decode.log" "$LOGS/i_hook.log" "$OUT/" 2>/dev/null
{
  echo
  echo "== device-check summary ($((SECONDS - t_begin)) s, results in $OUT)"
  printf '%s\n' "${results[@]}"
} | tee "$OUT/summary.txt"
exit 0
