"""When the job or the hook fails: the job's exception, a killed worker, internal hook errors."""

import json
import os
import unittest

from hooktest import JobCase, loader_spec, needs_torch


# A worker's exception, re-raised by torch in the main process: recorded once (by the main
# process), with the worker's own error and line read from torch's message.
RAISING_JOB = r'''
import torch
from torch.utils.data import DataLoader, Dataset


class Corrupt(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        if i == 5:
            raise ValueError("sample %d is corrupt" % i)
        return i


if __name__ == "__main__":
    for batch in DataLoader(Corrupt(), batch_size=2, num_workers=1):
        pass
'''


@needs_torch
class ExceptionTests(JobCase):
    def test_a_workers_exception_is_recorded_with_its_own_line(self):
        run = self.run_script("raising", RAISING_JOB)
        self.assertNotEqual(run.rc, 0)
        self.assertIn("ValueError: sample 5 is corrupt", run.stderr)  # still printed as before
        script = os.path.join(run.workdir, "job.py")
        exc, = run.records("exception")
        self.assertEqual(exc, run.main("exception")[0])
        self.assertEqual(exc["type"], "ValueError")
        self.assertEqual(exc["script"], {"file": script, "line": 17, "function": "<module>"})
        self.assertEqual(exc["worker"], {
            "process": "DataLoader worker process 0", "error": "ValueError: sample 5 is corrupt",
            "raised_at": {"file": script, "line": 12, "function": "__getitem__"}})
        # The item it was raised for, which torch's message does not name: from the worker.
        item, = run.records("item_error")
        self.assertEqual({k: item[k] for k in ("loader", "worker", "index", "type", "message")},
                         {"loader": 0, "worker": 0, "index": 5, "type": "ValueError",
                          "message": "sample 5 is corrupt"})
        self.assertEqual(run.main("item_error"), [])  # the worker's own record
        self.assertLess(item["ns"], exc["ns"])


KILL_JOB = r'''
import json, os, signal, sys, time
import torch
from torch.utils.data import DataLoader, Dataset
OUT = sys.argv[1]


class Suicidal(Dataset):
    """Item 80 SIGKILLs its worker, after writing when each item ended."""
    def __init__(self):
        self.done = []

    def __len__(self):
        return 200

    def __getitem__(self, i):
        if i == 80:
            with open(os.path.join(OUT, "truth.json"), "w") as f:
                json.dump({"done": self.done, "kill_ns": time.monotonic_ns()}, f)
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.02)
        self.done.append([i, time.monotonic_ns()])
        return i


if __name__ == "__main__":
    for b in DataLoader(Suicidal(), batch_size=1, num_workers=1):
        pass
'''


@needs_torch
class KilledWorkerTests(JobCase):
    def test_sigkill_loses_at_most_the_last_flush_period(self):
        wd = self.workdir("killout")
        run = self.run_script("kill", KILL_JOB, args=[wd])
        self.assertNotEqual(run.rc, 0)
        # torch reports the death as "DataLoader worker (pid N) is killed", or, when the kill
        # lands while main is fetching the previous batch's shared-memory fd from the worker's
        # resource sharer, as that connection failing (EOFError, ConnectionResetError): a race
        # of torch's own. On torch 2.x the EOFError may surface only at interpreter shutdown,
        # after sys.stderr is gone ("object type name: EOFError ... lost sys.stderr").
        died = ("DataLoader worker", "resource_sharer", "EOFError", "ConnectionResetError")
        self.assertTrue(any(d in run.stderr for d in died), run.stderr[-2000:])
        with open(os.path.join(wd, "truth.json")) as f:
            truth = json.load(f)
        recorded = {r["index"] for r in run.records("getitem")}
        # Anything that ended 1 s before the kill must be on disk: the 200 ms flush period plus
        # what a worker can be kept off a loaded 2-core machine's CPUs.
        old = [i for i, end in truth["done"] if end < truth["kill_ns"] - 1_000_000_000]
        self.assertGreater(len(old), 10)
        self.assertTrue(set(old) <= recorded, (sorted(set(old) - recorded), len(truth["done"])))
        lost = len(truth["done"]) - len(recorded & {i for i, _ in truth["done"]})
        print("\n[sigkill] worker items done %d, recorded %d, lost %d"
              % (len(truth["done"]), len(recorded), lost))


@needs_torch
class FaultTests(JobCase):
    """MMPROF_HOOK_TEST_FAULT (test-only) forces an internal hook error."""

    CFG0 = {"loaders": [loader_spec(n=12, sleep=0, batch_size=4, num_workers=0)], "plan": [[0, 2, None]]}
    CFG2 = {"loaders": [loader_spec(n=16, sleep=0.002, batch_size=4, num_workers=2)], "plan": [[0, 2, None]]}

    def fps(self, run):
        return [b["fp"] for b in run.job("batch")]

    def test_fault_in_main_disables_hook_results_identical(self):
        ref = self.run_job("ref0", self.CFG0, hook=False)
        run = self.run_job("fault-batch", self.CFG0, env={"MMPROF_HOOK_TEST_FAULT": "batch:3"})
        self.assertOk(ref)
        self.assertOk(run)
        self.assertEqual(self.fps(run), self.fps(ref))
        self.assertEqual(len(self.fps(ref)), 6)
        errs = run.main("error")
        self.assertEqual(len(errs), 1)
        self.assertEqual(errs[0]["where"], "batch")
        self.assertIn("MMPROF_HOOK_TEST_FAULT", errs[0]["message"])
        # two batches recorded, then the hook is off in this process
        self.assertEqual(len(run.main("batch")), 2)
        self.assertEqual(run.main()[-1]["t"], "error")

    def test_fault_in_worker_results_identical(self):
        ref = self.run_job("ref2", self.CFG2, hook=False)
        run = self.run_job("fault-fetch", self.CFG2, env={"MMPROF_HOOK_TEST_FAULT": "fetch:2"})
        self.assertOk(ref)
        self.assertOk(run)
        self.assertEqual(self.fps(run), self.fps(ref))
        # each worker process failed at its own second fetch; main kept recording
        workers = run.worker_files()
        self.assertEqual(len(workers), 4)  # 2 workers x 2 epochs (not persistent)
        for pid, lines in workers.items():
            errs = [r for r in lines if r["t"] == "error"]
            self.assertEqual([e["where"] for e in errs], ["fetch"], lines)
            self.assertEqual(sum(r["t"] == "fetch" for r in lines), 1)
        self.assertEqual(len(run.main("batch")), 8)
        self.assertEqual(run.main("error"), [])


if __name__ == "__main__":
    unittest.main()
