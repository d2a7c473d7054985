"""Helpers for the external-hook tests: planted jobs run as subprocesses with
mmprof's sitecustomize on PYTHONPATH, and the records they leave.

Every job is written by the tests into a fresh temporary directory; nothing
here depends on the C++ build.
"""

import functools
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOOK_PATH = os.path.join(REPO, "src", "external", "python")
JOB_TIMEOUT = 120


def _has_torch(python):
    try:
        r = subprocess.run([python, "-c", "import torch"], capture_output=True, timeout=300,
                           env=clean_env())
        return r.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def clean_env():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("MMPROF_HOOK_") or k in ("PYTHONPATH", "JOB_CFG", "PYTHONHOME"):
            del env[k]
    return env


# MMPROF_TEST_TORCH picks the torch the jobs run on (tests/external/run.sh --torch): "2", the
# venv of scripts/install-deps --torch2, or "1.13", Debian's python3-torch; the capability a run
# without it lacks (hooktest.required). Unset: the first interpreter that imports torch.
TORCHES = {
    "2": ("torch2", lambda: subprocess.run([os.path.join(REPO, "scripts", "torch2-python")],
                                           capture_output=True, text=True).stdout.strip()),
    "1.13": ("torch", lambda: "/usr/bin/python3"),
}


def torch_capability():
    return TORCHES.get(os.environ.get("MMPROF_TEST_TORCH", ""), ("torch", None))[0]


@functools.lru_cache(maxsize=None)
def torch_python():
    """The interpreter the torch jobs run under: the one MMPROF_TEST_TORCH names, else
    MMPROF_TEST_PYTHON, this one or /usr/bin/python3 (Debian's torch), whichever imports torch."""
    chosen = TORCHES.get(os.environ.get("MMPROF_TEST_TORCH", ""))
    if chosen:
        cands = (chosen[1](),)
    else:
        cands = (os.environ.get("MMPROF_TEST_PYTHON"), sys.executable, "/usr/bin/python3")
    for cand in cands:
        if cand and _has_torch(cand):
            return cand
    return None


@functools.lru_cache(maxsize=None)
def torch_info():
    py = torch_python()
    if py is None:
        return None
    code = ("import json, inspect, torch, torch.utils.data as d\n"
            "p = inspect.signature(d.DataLoader.__init__).parameters\n"
            "try:\n import torchvision; tv = True\nexcept Exception:\n tv = False\n"
            "print(json.dumps({'version': str(torch.__version__), 'in_order': 'in_order' in p,"
            " 'prefetch_default': p['prefetch_factor'].default, 'torchvision': tv,"
            " 'cuda': bool(torch.cuda.is_available())}))")
    r = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=120, env=clean_env())
    if r.returncode != 0:
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def required(capability):
    """Whether this run requires the suites that need `capability`: CI names the ones the
    machine has in MMPROF_TEST_REQUIRE (.ci/stages.sh); their tests fail instead of skipping."""
    return capability in os.environ.get("MMPROF_TEST_REQUIRE", "").split(",")


def skip_without(capability, available, why):
    """A decorator: the test or class skips when `available` is false (the reason reads
    `[needs CAPABILITY] why`, as scripts/test-skips lists it), or fails when this run requires
    the capability."""
    reason = "[needs %s] %s" % (capability, why)
    if available:
        return lambda x: x
    if not required(capability):
        return unittest.skip(reason)

    def fail(cls_or_fn):
        def failing(self):
            self.fail("MMPROF_TEST_REQUIRE names %s, yet: %s" % (capability, why))
        if isinstance(cls_or_fn, type):
            for name in [n for n in vars(cls_or_fn) if n.startswith("test")]:
                setattr(cls_or_fn, name, failing)
            return cls_or_fn
        return functools.wraps(cls_or_fn)(failing)
    return fail


def needs_torch(cls_or_fn):
    return skip_without(torch_capability(), torch_python() is not None,
                        "no python with torch %s found" % os.environ.get("MMPROF_TEST_TORCH", "")
                        )(cls_or_fn)


def same_clock():
    """perf_counter_ns (the jobs' own clock) is CLOCK_MONOTONIC, as the hook's."""
    return time.get_clock_info("perf_counter").implementation == "clock_gettime(CLOCK_MONOTONIC)"


class Run:
    """One finished job: its exit status, output, its own log and the records."""

    def __init__(self, workdir, proc, hook_dir):
        self.workdir = workdir
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.hook_dir = hook_dir
        self.files = {}
        for path in sorted(glob.glob(os.path.join(hook_dir, "hook-*.jsonl"))):
            with open(path) as f:
                lines = [json.loads(line) for line in f if line.strip()]
            self.files[int(os.path.basename(path)[5:-6])] = lines
        self.log = []
        log = os.path.join(workdir, "job.jsonl")
        if os.path.exists(log):
            with open(log) as f:
                self.log = [json.loads(line) for line in f if line.strip()]
        self.wif = []
        for path in glob.glob(os.path.join(workdir, "wif-*.json")):
            with open(path) as f:
                self.wif.append(json.load(f))

    def records(self, t=None, pid=None):
        out = []
        for p, lines in self.files.items():
            if pid is not None and p != pid:
                continue
            out.extend(r for r in lines if t is None or r["t"] == t)
        return out

    @property
    def main_pid(self):
        for p, lines in self.files.items():
            if lines and lines[0]["t"] == "proc" and lines[0]["role"] == "main":
                return p
        return None

    def main(self, t=None):
        return self.records(t, self.main_pid)

    def worker_files(self):
        return {p: lines for p, lines in self.files.items()
                if lines and lines[0]["t"] == "proc" and lines[0]["role"] == "worker"}

    def job(self, t):
        return [r for r in self.log if r["t"] == t]

    def describe(self):
        return "rc=%s\nstdout:\n%s\nstderr:\n%s" % (self.rc, self.stdout[-3000:], self.stderr[-3000:])


class JobCase(unittest.TestCase):
    """Creates one temporary directory per test class."""

    def need_module(self, module):
        """Skips (as the torch 2.x venv's capability) when the job's torch lacks `module`."""
        py = torch_python()
        found = py is not None and subprocess.run([py, "-c", "import " + module],
                                                  capture_output=True).returncode == 0
        if not found:
            self.skip_without("torch2", "%s is not installed with this torch "
                              "(scripts/torch2-requirements.txt)" % module)

    def skip_without(self, capability, why):
        """Skips this test for want of `capability`, or fails it when the run requires it."""
        if required(capability):
            self.fail("MMPROF_TEST_REQUIRE names %s, yet: %s" % (capability, why))
        self.skipTest("[needs %s] %s" % (capability, why))

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="mmprof-hook-test-")
        cls._n = 0

    @classmethod
    def tearDownClass(cls):
        if os.environ.get("MMPROF_TEST_KEEP"):
            print("kept", cls.tmp, file=sys.stderr)
        else:
            shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def workdir(cls, name):
        cls._n += 1
        d = os.path.join(cls.tmp, "%02d-%s" % (cls._n, name))
        os.makedirs(d)
        return d

    @classmethod
    def run_script(cls, name, script, cfg=None, env=None, hook=True, python=None,
                   pythonpath=None, args=(), timeout=JOB_TIMEOUT):
        """Run ``script`` (source text) in a new work dir.  hook=True sets
        MMPROF_HOOK_DIR=<workdir>/hook; PYTHONPATH is ``pythonpath`` when given,
        else the hook's directory when hook=True, else unset."""
        wd = cls.workdir(name)
        path = os.path.join(wd, "job.py")
        with open(path, "w") as f:
            f.write(script)
        hook_dir = os.path.join(wd, "hook")
        e = clean_env()
        if cfg is not None:
            cfg = dict(cfg)
            cfg["out"] = wd
            e["JOB_CFG"] = json.dumps(cfg)
        if pythonpath is None:
            pp = [HOOK_PATH] if hook else []
        else:
            pp = list(pythonpath)
        if hook:
            e["MMPROF_HOOK_DIR"] = hook_dir
        if pp:
            e["PYTHONPATH"] = os.pathsep.join(pp)
        if env:
            for k, v in env.items():
                if v is None:
                    e.pop(k, None)
                else:
                    e[k] = v
        py = python or torch_python() or sys.executable
        proc = subprocess.run([py, path] + list(args), cwd=wd, env=e, capture_output=True,
                              text=True, timeout=timeout)
        return Run(wd, proc, hook_dir)

    @classmethod
    def run_job(cls, name, cfg, env=None, hook=True, **kw):
        return cls.run_script(name, JOB, cfg=cfg, env=env, hook=hook, **kw)

    def assertOk(self, run):
        self.assertEqual(run.rc, 0, run.describe())

    def assertNoErrors(self, run):
        errs = run.records("error")
        self.assertEqual(errs, [], run.describe())


def loader_spec(n=24, sleep=0.02, dataset="sleep", worker_init=False, **kwargs):
    return {"dataset": dataset, "n": n, "sleep": sleep, "worker_init": worker_init,
            "kwargs": kwargs}


def median(xs):
    return statistics.median(xs) if xs else None


# The planted job.  JOB_CFG (JSON):
#   loaders: [{dataset, n, sleep, worker_init, kwargs, pinnable}]
#   plan:    [[loader index, epochs, batch limit per epoch or null], ...]
#   step:    seconds the "training step" sleeps after each batch
#   fake_cuda: pretend CUDA is there (pin_memory path without a GPU)
# It logs, per batch, its own perf_counter_ns() before and after next(it).
JOB = r'''
import json, os, sys, time
CFG = json.loads(os.environ["JOB_CFG"])
try:
    import torch
except ImportError as exc:
    print("no torch:", exc)
    sys.exit(0)
from torch.utils.data import Dataset, IterableDataset, DataLoader


class SleepDS(Dataset):
    def __init__(self, n, sleep):
        self.n, self.sleep = n, sleep

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.sleep:
            time.sleep(self.sleep)
        return torch.arange(12, dtype=torch.float32).reshape(3, 4) + i, i


class OtherDS(SleepDS):
    pass


class BatchedDS(SleepDS):
    def __getitems__(self, indices):
        return [self[i] for i in indices]


class StreamDS(IterableDataset):
    def __init__(self, n, sleep):
        self.n, self.sleep = n, sleep

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        wid, nw = (info.id, info.num_workers) if info is not None else (0, 1)
        for i in range(wid, self.n, nw):
            if self.sleep:
                time.sleep(self.sleep)
            yield torch.full((2,), float(i))


class Pinnable:
    """A batch whose pin_memory() works without CUDA (exercises the pin path)."""
    def __init__(self, x):
        self.x = x

    def pin_memory(self):
        return self


def pinnable_collate(items):
    return Pinnable(torch.utils.data.default_collate(items))


def record_worker(worker_id):
    info = torch.utils.data.get_worker_info()
    with open(os.path.join(CFG["out"], "wif-%d.json" % os.getpid()), "w") as f:
        json.dump({"pid": os.getpid(), "id": info.id, "arg": worker_id}, f)


def make_dataset(spec):
    kind = spec.get("dataset", "sleep")
    if kind == "sleep":
        return SleepDS(spec["n"], spec["sleep"])
    if kind == "other":
        return OtherDS(spec["n"], spec["sleep"])
    if kind == "batched":
        return BatchedDS(spec["n"], spec["sleep"])
    if kind == "stream":
        return StreamDS(spec["n"], spec["sleep"])
    if kind == "imagefolder":
        import torchvision.transforms as T
        from torchvision.datasets import ImageFolder
        return ImageFolder(spec["root"], transform=T.Compose([T.Resize(8), T.ToTensor()]))
    raise ValueError(kind)


def make_loader(spec):
    kwargs = dict(spec.get("kwargs", {}))
    if spec.get("worker_init"):
        kwargs["worker_init_fn"] = record_worker
    if spec.get("pinnable"):
        kwargs["collate_fn"] = pinnable_collate
    return DataLoader(make_dataset(spec), **kwargs)


def fingerprint(b):
    if isinstance(b, Pinnable):
        b = b.x
    if isinstance(b, (list, tuple)):
        return [fingerprint(x) for x in b]
    if isinstance(b, torch.Tensor):
        return [list(b.shape), float(b.double().sum())]
    return repr(b)


def main():
    log = open(os.path.join(CFG["out"], "job.jsonl"), "a")

    def w(obj):
        log.write(json.dumps(obj) + "\n")
        log.flush()

    if CFG.get("fake_cuda"):
        torch.cuda.is_available = lambda: True
        torch.cuda.current_device = lambda: 0
        torch.cuda.set_device = lambda d: None
        if hasattr(torch, "accelerator"):  # torch >= 2.6 asks it for the pin thread's device
            torch.accelerator.current_device_index = lambda: 0
            torch.accelerator.set_device_index = lambda d: None
    loaders = [make_loader(s) for s in CFG["loaders"]]
    w({"t": "start", "pid": os.getpid(), "hook_loaded": "mmprof_hook" in sys.modules,
       "num_workers": [l.num_workers for l in loaders],
       "persistent": [l.persistent_workers for l in loaders],
       "prefetch": [l.prefetch_factor for l in loaders]})
    step = CFG.get("step", 0)
    for li, epochs, limit in CFG["plan"]:
        dl = loaders[li]
        for ep in range(epochs):
            it = iter(dl)
            w({"t": "epoch", "loader": li, "pids": [p.pid for p in getattr(it, "_workers", [])],
               "pin": getattr(it, "_pin_memory", None)})
            k = 0
            while limit is None or k < limit:
                t0 = time.perf_counter_ns()
                try:
                    b = next(it)
                except StopIteration:
                    break
                t1 = time.perf_counter_ns()
                w({"t": "batch", "loader": li, "t0": t0, "t1": t1, "fp": fingerprint(b)})
                k += 1
                if step:
                    time.sleep(step)
    w({"t": "end"})


if __name__ == "__main__":
    ctx = CFG.get("start_method")
    if ctx:
        import multiprocessing
        multiprocessing.set_start_method(ctx)
    main()
'''
