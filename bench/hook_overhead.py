#!/usr/bin/env python3
"""What the zero-code hook costs a job, by the job's own clock (bench/README.md, "hook overhead").

A planted job (a map-style dataset whose __getitem__ sleeps a fixed time, a training step that
sleeps a fixed time, DataLoader workers) times its own loop with perf_counter and prints its mean
iteration time over the measured batches. Each round runs it twice in a random order: alone, and
under `mmprof baseline -- ...` (hook on, process tree sampled). The figure is the per-round ratio
hooked / plain of the job's own mean step time: median and min..max over the rounds, and the
hook's time per batch in microseconds (the difference of the medians).

This cannot be an `mmprof ab` arm: with the hook off mmprof has no figure of the job to compare,
since the hook is how mmprof sees inside it. The job's own clock is the independent measure.

    /usr/bin/python3 bench/hook_overhead.py --mmprof build/release/src/mmprof [--rounds 10]
        [--python "$(scripts/torch2-python)"] [--real IMAGES]

--real IMAGES times a real-style job instead: torchvision's ImageFolder over IMAGES JPEGs
(480x640, written first), a Compose of Resize and ToTensor, shuffled, persistent workers.
"""
import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile

JOB = r'''
import sys, time, torch
from torch.utils.data import DataLoader, Dataset
getitem_ms, step_ms, bs, nw, warm, steps = map(float, sys.argv[1:7])
class D(Dataset):
    def __len__(self): return 100000
    def __getitem__(self, i):
        time.sleep(getitem_ms / 1000)
        return torch.zeros(3, 32, 32)
loader = DataLoader(D(), batch_size=int(bs), num_workers=int(nw), persistent_workers=True)
it = iter(loader)
'''

# What both jobs run on `it`, their batches: `warm` steps, then `steps` timed by the job's clock.
LOOP = r'''
for _ in range(int(warm)):
    next(it); time.sleep(step_ms / 1000)
t0 = time.perf_counter()
for _ in range(int(steps)):
    next(it); time.sleep(step_ms / 1000)
print("MEAN_STEP_MS %.6f" % ((time.perf_counter() - t0) * 1000 / steps))
'''

# The real-style job (--real): a torchvision ImageFolder of 640x480 JPEGs, decoded, resized to
# 128x96 and made tensors by a Compose (whose loader and transforms the hook times, sampled),
# shuffled, epoch after epoch over persistent workers.
REAL_JOB = r'''
import sys, time, torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
root = sys.argv[1]
step_ms, bs, nw, warm, steps = map(float, sys.argv[2:7])
tf = transforms.Compose([transforms.Resize((96, 128)), transforms.ToTensor()])
loader = DataLoader(datasets.ImageFolder(root, transform=tf), batch_size=int(bs),
                    num_workers=int(nw), shuffle=True, persistent_workers=True)
def batches():
    while True:
        for b in loader:
            yield b
it = batches()
'''


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("MEAN_STEP_MS"):
            return float(line.split()[1])
    raise RuntimeError("no MEAN_STEP_MS in the output of %s" % cmd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mmprof", required=True)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--getitem-ms", type=float, default=2.0)
    ap.add_argument("--step-ms", type=float, default=40.0)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--real", type=int, default=0, metavar="IMAGES",
                    help="the real-style job over an ImageFolder of IMAGES JPEGs (written first) "
                         "instead of the planted one; --getitem-ms is then unused")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="mmprof-hook-overhead-")
    job = os.path.join(tmp, "job.py")
    with open(job, "w") as f:
        f.write((REAL_JOB if a.real else JOB) + LOOP)
    if a.real:
        root = os.path.join(tmp, "images")
        jobs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "external",
                            "jobs")
        subprocess.run([a.python, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import "
                        "job_common; job_common.write_image_folder(sys.argv[2], int(sys.argv[3]))",
                        jobs, root, str(a.real)], check=True)
        plan = [root] + [str(x) for x in (a.step_ms, a.batch, a.workers, a.warmup, a.steps)]
    else:
        plan = [str(x) for x in (a.getitem_ms, a.step_ms, a.batch, a.workers, a.warmup, a.steps)]
    plain_cmd = [a.python, job] + plan
    rng = random.Random(a.seed)
    plain, hooked, ratios = [], [], []
    # One untimed run of each first: page cache, Python's bytecode cache, torch's import.
    run(plain_cmd)
    run([a.mmprof, "baseline", "--out", os.path.join(tmp, "warm"), "--json", "--"] + plain_cmd)
    for r in range(a.rounds):
        order = ["plain", "hooked"]
        rng.shuffle(order)
        got = {}
        for arm in order:
            if arm == "plain":
                got[arm] = run(plain_cmd)
            else:
                out = os.path.join(tmp, "r%02d" % r)
                got[arm] = run([a.mmprof, "baseline", "--out", out, "--json", "--"] + plain_cmd)
        plain.append(got["plain"])
        hooked.append(got["hooked"])
        ratios.append(got["hooked"] / got["plain"])
        print("round %d: plain %.3f ms, hooked %.3f ms, ratio %.4f"
              % (r, got["plain"], got["hooked"], ratios[-1]), file=sys.stderr)
    med = statistics.median
    what = ("an ImageFolder of %d JPEGs (640x480 to 128x96)" % a.real if a.real
            else "%s ms getitem" % a.getitem_ms)
    print("job: %s, %s ms step, batch %d, %d workers, %d measured steps"
          % (what, a.step_ms, a.batch, a.workers, a.steps))
    print("plain  mean step: median %.3f ms (%.3f..%.3f)" % (med(plain), min(plain), max(plain)))
    print("hooked mean step: median %.3f ms (%.3f..%.3f)" % (med(hooked), min(hooked), max(hooked)))
    print("ratio hooked/plain per round: median %.4f (%.4f..%.4f) over %d rounds"
          % (med(ratios), min(ratios), max(ratios), a.rounds))
    print("hook cost per step: %.1f us (difference of medians)"
          % ((med(hooked) - med(plain)) * 1000))


if __name__ == "__main__":
    main()
