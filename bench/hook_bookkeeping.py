#!/usr/bin/env python3
"""The hook's own bookkeeping per batch and per sample (a benchmark: bench/README.md).

A job iterates a DataLoader over a dataset whose __getitem__ returns a
prepared tensor (no work at all), num_workers=0, so every microsecond the hook
adds is on the measured path.  Three processes (no hook; hook with getitem
records off; hook with every record on) each time the loop several times
after a warm-up epoch and keep the fastest.

  per batch  = (hooked - plain) / batches, batch_size=1 ... getitem records off
  per sample = (getitem every=1 - getitem off) / samples, batch_size=64

Usage: bench/hook_bookkeeping.py [--quick]   (needs a python with torch: MMPROF_TEST_PYTHON,
this interpreter or /usr/bin/python3)
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests", "external"))
from hooktest import HOOK_PATH, clean_env, torch_python  # noqa: E402

BENCH = r"""
import json, sys, time, torch
from torch.utils.data import Dataset, DataLoader
class DS(Dataset):
    def __init__(s, n): s.n = n; s.t = torch.zeros(3, 8, 8)
    def __len__(s): return s.n
    def __getitem__(s, i): return s.t, i
def loop(dl):
    t0 = time.perf_counter_ns()
    k = 0
    for b in dl: k += 1
    return time.perf_counter_ns() - t0, k
if __name__ == "__main__":
    repeat, n1, n64 = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    out = {}
    for name, bs, n in (("bs1", 1, n1), ("bs64", 64, n64)):
        dl = DataLoader(DS(n), batch_size=bs, num_workers=0)
        loop(dl)                           # warm-up epoch (and the 8 digested batches)
        ns, k = min(loop(dl) for _ in range(repeat))
        out[name] = {"ns": ns, "batches": k, "samples": n}
    print(json.dumps(out))
"""


def run(py, script, args, env_extra):
    env = clean_env()
    env.update(env_extra)
    r = subprocess.run([py, script] + [str(a) for a in args], capture_output=True, text=True,
                       env=env, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure(quick=False):
    py = torch_python()
    if py is None:
        raise SystemExit("no python with torch")
    args = (3, 2000, 64 * 100) if quick else (7, 5000, 64 * 300)
    with tempfile.TemporaryDirectory(prefix="mmprof-overhead-") as tmp:
        script = os.path.join(tmp, "bench.py")
        with open(script, "w") as f:
            f.write(BENCH)
        hooked = {"PYTHONPATH": HOOK_PATH, "MMPROF_HOOK_DIR": os.path.join(tmp, "hook")}
        plain = run(py, script, args, {})
        gi_off = run(py, script, args, dict(hooked, MMPROF_HOOK_GETITEM_EVERY="0"))
        gi_on = run(py, script, args, hooked)
    b1, b64 = plain["bs1"], plain["bs64"]
    return {
        "python": py,
        "plain_batch_us": b1["ns"] / b1["batches"] / 1e3,
        "hook_per_batch_us": (gi_off["bs1"]["ns"] - b1["ns"]) / b1["batches"] / 1e3,
        "plain_sample_us_bs64": b64["ns"] / b64["samples"] / 1e3,
        "hook_per_sample_us": (gi_on["bs64"]["ns"] - gi_off["bs64"]["ns"]) / b64["samples"] / 1e3,
        "hook_per_batch_bs64_us": (gi_on["bs64"]["ns"] - b64["ns"]) / b64["batches"] / 1e3,
    }


def report(m):
    return ("hook overhead (num_workers=0, empty dataset, %s):\n"
            "  per batch  %.1f us  (plain loop %.1f us per batch of 1; fetch+batch records, stats)\n"
            "  per sample %.2f us  (getitem record each sample; plain %.2f us per sample at batch 64)\n"
            "  per batch of 64 with every record on: %.1f us"
            % (m["python"], m["hook_per_batch_us"], m["plain_batch_us"], m["hook_per_sample_us"],
               m["plain_sample_us_bs64"], m["hook_per_batch_bs64_us"]))


if __name__ == "__main__":
    print(report(measure("--quick" in sys.argv)))
