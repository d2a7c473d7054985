"""Overrides, MAX_BATCHES stop, loader selection, what the hook cannot wrap."""

import json
import os
import sys
import unittest

from hooktest import HOOK_PATH, JobCase, loader_spec, needs_torch, torch_info


@needs_torch
class OverrideTests(JobCase):
    def test_overrides_applied_and_unknown_rejected(self):
        ov = {"num_workers": 2, "persistent_workers": True, "prefetch_factor": 4, "in_order": False}
        run = self.run_job("ov", {"loaders": [loader_spec(n=8, sleep=0, batch_size=4, num_workers=0)],
                                  "plan": [[0, 2, None]]},
                           env={"MMPROF_HOOK_OVERRIDES": json.dumps(ov)})
        self.assertOk(run)
        self.assertNoErrors(run)
        start = run.job("start")[0]
        self.assertEqual(start["num_workers"], [2])
        self.assertEqual(start["persistent"], [True])
        self.assertEqual(start["prefetch"], [4])
        rec = run.main("loader")[0]
        o = rec["overrides"]
        expect = {"num_workers": 2, "persistent_workers": True, "prefetch_factor": 4}
        if torch_info()["in_order"]:
            expect["in_order"] = False
            self.assertEqual(o["rejected"], {})
        else:
            self.assertEqual(list(o["rejected"]), ["in_order"])
            self.assertIn("not a parameter of DataLoader.__init__", o["rejected"]["in_order"])
        self.assertEqual(o["applied"], expect)
        self.assertEqual(o["original"]["num_workers"], 0)
        self.assertEqual(o["original"]["persistent_workers"], False)
        self.assertEqual(o["original"]["prefetch_factor"], torch_info()["prefetch_default"])
        c = rec["config"]
        self.assertEqual((c["num_workers"], c["persistent_workers"], c["prefetch_factor"]), (2, True, 4))
        # the overrides took effect: two persistent workers served both epochs
        ep = run.main("epoch")
        self.assertEqual([e["reused"] for e in ep], [False, True])
        self.assertEqual(len(ep[0]["worker_pids"]), 2)
        self.assertEqual(len(run.worker_files()), 2)
        self.assertEqual(len(run.main("batch")), 4)

    def test_positional_arguments_are_overridden(self):
        # DataLoader(ds, 4, False, None, None, 0): num_workers given positionally.
        script = r'''
import json, os, sys
import torch
from torch.utils.data import DataLoader, TensorDataset
dl = DataLoader(TensorDataset(torch.arange(8)), 4, False, None, None, 0)
print(json.dumps({"num_workers": dl.num_workers, "batches": [b[0].tolist() for b in dl]}))
'''
        run = self.run_script("positional", script, env={"MMPROF_HOOK_OVERRIDES": '{"num_workers": 1}'})
        self.assertOk(run)
        out = json.loads(run.stdout.strip().splitlines()[-1])
        self.assertEqual(out, {"num_workers": 1, "batches": [[0, 1, 2, 3], [4, 5, 6, 7]]})
        self.assertEqual(run.main("loader")[0]["overrides"]["applied"], {"num_workers": 1})

    def test_subclass_origin_and_signature(self):
        script = r'''
import inspect, json
import torch
from torch.utils.data import DataLoader, TensorDataset


class MyLoader(DataLoader):
    def __init__(self, ds, **kw):
        super().__init__(ds, batch_size=2, **kw)


dl = MyLoader(TensorDataset(torch.arange(8)), num_workers=0)
print(json.dumps({"batches": len(list(dl)), "params": list(inspect.signature(DataLoader.__init__).parameters),
                  "name": DataLoader.__init__.__name__}))
'''
        run = self.run_script("subclass", script, env={"MMPROF_HOOK_OVERRIDES": '{"batch_size": 4}'})
        self.assertOk(run)
        out = json.loads(run.stdout.strip().splitlines()[-1])
        self.assertEqual(out["batches"], 2)          # the override reached super().__init__
        self.assertEqual(out["name"], "__init__")
        self.assertEqual(out["params"][:3], ["self", "dataset", "batch_size"])
        rec = run.main("loader")[0]
        line = script.splitlines().index("dl = MyLoader(TensorDataset(torch.arange(8)), num_workers=0)") + 1
        self.assertTrue(rec["origin"].endswith("job.py:%d" % line), rec["origin"])
        self.assertEqual(rec["overrides"]["applied"], {"batch_size": 4})
        self.assertEqual(rec["overrides"]["original"], {"batch_size": 2})

    def test_combination_torch_refuses_is_reported(self):
        # prefetch_factor needs num_workers > 0 (torch's own check): the job keeps
        # num_workers=0, prefetch_factor is rejected with torch's message, and
        # the override torch accepts alongside (drop_last) is still applied.
        ov = {"prefetch_factor": 4, "drop_last": True}
        run = self.run_job("combo", {"loaders": [loader_spec(n=10, sleep=0, batch_size=4, num_workers=0)],
                                     "plan": [[0, 1, None]]},
                           env={"MMPROF_HOOK_OVERRIDES": json.dumps(ov)})
        self.assertOk(run)
        self.assertNoErrors(run)
        o = run.main("loader")[0]["overrides"]
        self.assertEqual(o["applied"], {"drop_last": True})
        self.assertIn("prefetch_factor", o["rejected"])
        self.assertIn("refused by torch", o["rejected"]["prefetch_factor"])
        self.assertIn("ValueError", o["rejected"]["prefetch_factor"])
        self.assertEqual(run.job("start")[0]["num_workers"], [0])
        self.assertEqual(len(run.main("batch")), 2)   # 10 samples, drop_last

    def test_caller_error_is_torchs_own(self):
        # The job's own arguments are invalid: with overrides set, it fails
        # exactly as it fails without the hook.
        cfg = {"loaders": [loader_spec(n=8, sleep=0, batch_size=4, num_workers=0,
                                       persistent_workers=True)], "plan": [[0, 1, None]]}
        plain = self.run_job("usererr-plain", cfg, hook=False)
        hooked = self.run_job("usererr-hook", cfg, env={"MMPROF_HOOK_OVERRIDES": '{"pin_memory": false}'})
        self.assertNotEqual(plain.rc, 0)
        self.assertEqual(hooked.rc, plain.rc)
        self.assertIn("persistent_workers option needs num_workers > 0", plain.stderr)
        self.assertEqual(hooked.stderr.strip().splitlines()[-1], plain.stderr.strip().splitlines()[-1])
        self.assertEqual(hooked.main("loader"), [])
        # ... and the exception that ended it is recorded, at the job's own line.
        exc, = hooked.records("exception")
        self.assertEqual(exc["type"], "ValueError")
        self.assertIn("persistent_workers option needs num_workers > 0", exc["message"])
        self.assertEqual(exc["script"]["file"], os.path.join(hooked.workdir, "job.py"))
        self.assertIsNone(exc["worker"])

    def test_bad_override_json_is_reported_not_fatal(self):
        run = self.run_job("badjson", {"loaders": [loader_spec(n=4, sleep=0, batch_size=2)],
                                       "plan": [[0, 1, None]]},
                           env={"MMPROF_HOOK_OVERRIDES": "{num_workers: 2", "MMPROF_HOOK_MAX_BATCHES": "x"})
        self.assertOk(run)
        errs = run.main("error")
        self.assertEqual(sorted(e["where"] for e in errs),
                         ["MMPROF_HOOK_MAX_BATCHES", "MMPROF_HOOK_OVERRIDES"])
        self.assertEqual(len(run.main("batch")), 2)   # the hook stayed on


# Gradient accumulation as a job writes it: its optimizer steps every third batch.
ACCUMULATING = r'''
import torch
from torch.utils.data import DataLoader, TensorDataset

model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i, (x,) in enumerate(DataLoader(TensorDataset(torch.ones(24, 4)), batch_size=2)):
    model(x).sum().backward()
    if (i + 1) % 3 == 0:
        opt.step()
        opt.zero_grad()
'''


@needs_torch
class OptimizerTests(JobCase):
    def test_optimizer_steps_are_recorded_where_torch_has_the_hook(self):
        run = self.run_script("accumulating", ACCUMULATING)
        self.assertOk(run)
        self.assertNoErrors(run)
        watch, = run.main("optim_watch")
        major = int(torch_info()["version"].split(".")[0])
        self.assertEqual(watch["available"], major >= 2, watch)
        steps = run.main("optim_step")
        if major >= 2:
            self.assertIsNone(watch["why"])
            self.assertEqual([s["opt"] for s in steps], [0] * 4)  # 12 batches, every third
            # each between the batches it follows and the next one's call
            calls = [b["call_ns"] for b in run.main("batch")]
            for k, s in enumerate(steps):
                self.assertLess(calls[3 * k + 2], s["ns"])
                if 3 * k + 3 < len(calls):
                    self.assertLess(s["ns"], calls[3 * k + 3])
        else:
            self.assertIn("register_optimizer_step_post_hook", watch["why"])
            self.assertEqual(steps, [])
        self.assertEqual(run.main("partial"), [])  # not a partial hook on either torch


@needs_torch
class StopTests(JobCase):
    def test_max_batches_stops_the_job_as_planned(self):
        cfg = {"loaders": [loader_spec(n=40, sleep=0.005, batch_size=4, num_workers=2)],
               "plan": [[0, 3, None]], "step": 0.01}
        run = self.run_job("max", cfg, env={"MMPROF_HOOK_MAX_BATCHES": "5"})
        # one line, no traceback, exit status 0
        self.assertEqual(run.rc, 0, run.describe())
        self.assertNotIn("Traceback", run.stderr)
        self.assertEqual(run.stderr.strip().splitlines()[-1],
                         "mmprof: stopped the job after 5 batches: the warm-up and steps mmprof "
                         "was asked to measure (MMPROF_HOOK_MAX_BATCHES=5)")
        self.assertEqual(len(run.job("batch")), 5)
        self.assertEqual(run.job("end"), [])
        main = run.main()
        self.assertEqual(len(run.main("batch")), 5)
        stop = run.main("stop")
        self.assertEqual(len(stop), 1)
        self.assertEqual(stop[0]["reason"], "max_batches")
        self.assertEqual(stop[0]["batches"], 5)
        self.assertEqual(stop[0]["loader"], 0)
        self.assertEqual(main[-1]["t"], "stop")
        self.assertGreater(stop[0]["ns"], run.main("batch")[-1]["ret_ns"])
        self.assertEqual(run.records("exception"), [])  # the hook's own stop is no exception
        # workers' records were flushed before the job went down: every fetch
        # the main process received, with all its getitems
        workers = run.worker_files()
        self.assertEqual(sorted(workers), sorted(run.main("epoch")[0]["worker_pids"]))
        fetches = run.records("fetch")
        self.assertGreaterEqual(len(fetches), 5)
        self.assertEqual(len(run.records("getitem")), 4 * len(fetches))
        for pid, lines in workers.items():
            self.assertTrue(any(r["t"] == "fetch" for r in lines), pid)

    def test_stop_file_stops_like_max_batches(self):
        # The stop file exists from the start: the first followed __next__ that looks (the
        # first one, its check interval having passed since the process started) stops.
        stop_file = os.path.join(self.tmp, "stop-file")
        with open(stop_file, "w"):
            pass
        cfg = {"loaders": [loader_spec(n=40, sleep=0, batch_size=4, num_workers=2)],
               "plan": [[0, 3, None]], "step": 0.01}
        run = self.run_job("stopfile", cfg, env={"MMPROF_HOOK_STOP_FILE": stop_file})
        self.assertEqual(run.rc, 0, run.describe())
        self.assertNotIn("Traceback", run.stderr)
        self.assertIn("mmprof asked it to stop (%s)" % stop_file, run.stderr)
        stop = run.main("stop")
        self.assertEqual(len(stop), 1)
        self.assertEqual(stop[0]["reason"], "requested")
        self.assertEqual(stop[0]["batches"], len(run.main("batch")))
        self.assertEqual(run.main()[-1]["t"], "stop")

    def test_count_spans_epochs_single_process(self):
        cfg = {"loaders": [loader_spec(n=12, sleep=0, batch_size=4, num_workers=0)],
               "plan": [[0, 3, None]]}
        run = self.run_job("max-epochs", cfg, env={"MMPROF_HOOK_MAX_BATCHES": "4"})
        self.assertEqual(run.rc, 0, run.describe())  # a planned stop
        b = run.main("batch")
        self.assertEqual([(r["epoch"], r["i"]) for r in b], [(0, 0), (0, 1), (0, 2), (1, 0)])
        self.assertEqual(run.main()[-1]["t"], "stop")

    def _two_loaders(self, name, selector):
        # loader 0 (SleepDS): one epoch of 4 batches; loader 1 (OtherDS): 2 epochs of 4
        cfg = {"loaders": [loader_spec(n=8, sleep=0, batch_size=2),
                           loader_spec(n=8, sleep=0, batch_size=2, dataset="other")],
               "plan": [[0, 1, None], [1, 2, None]]}
        return self.run_job(name, cfg, env={"MMPROF_HOOK_MAX_BATCHES": "3",
                                            "MMPROF_HOOK_LOADER": selector})

    def test_follow_loader_by_index(self):
        run = self._two_loaders("follow-index", "1")
        self.assertEqual(run.rc, 0, run.describe())  # a planned stop
        b = run.main("batch")
        self.assertEqual([r["loader"] for r in b], [0, 0, 0, 0, 1, 1, 1])
        self.assertEqual(run.main("stop")[0]["loader"], 1)
        self.assertEqual([r["follow"] for r in run.main("loader")], [False, True])

    def test_follow_loader_by_dataset_class(self):
        run = self._two_loaders("follow-name", "OtherDS")
        self.assertEqual(run.rc, 0, run.describe())  # a planned stop
        self.assertEqual([r["loader"] for r in run.main("batch")], [0, 0, 0, 0, 1, 1, 1])
        self.assertEqual(run.main("stop")[0]["loader"], 1)


# A fake torch with a DataLoader of another shape than any torch so far: no single-process
# iterator, a multi-process iterator whose constructor takes (self, dl), no _DatasetKind and no
# _utils. Runs on the interpreter running the tests (no real torch needed).
FAKE_DATALOADER = r'''
class DataLoader:
    def __init__(self, dataset, batch_size=1):
        self.dataset = dataset
        self.batch_size = batch_size

    def __iter__(self):
        return _BaseDataLoaderIter(self)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self.loader = loader
        self.i = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= len(self.loader.dataset):
            raise StopIteration
        self.i += 1
        return self.loader.dataset[self.i - 1]


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, dl):
        super().__init__(dl)
'''


class PartialTests(JobCase):
    """What the hook cannot wrap is said (``partial`` records), never measured wrong."""

    def test_a_torch_of_unknown_shape_names_what_it_lacks_and_still_times_batches(self):
        fake = os.path.join(self.workdir("fake-torch-tree"), "site")
        pkg = os.path.join(fake, "torch", "utils", "data")
        os.makedirs(pkg)
        for d, text in ((os.path.join(fake, "torch"), "__version__ = '9.0.0'\n"),
                        (os.path.join(fake, "torch", "utils"), ""), (pkg, "")):
            with open(os.path.join(d, "__init__.py"), "w") as f:
                f.write(text)
        with open(os.path.join(pkg, "dataloader.py"), "w") as f:
            f.write(FAKE_DATALOADER)
        script = (
            "import torch\n"
            "from torch.utils.data.dataloader import DataLoader\n"
            "print(sum(1 for _ in DataLoader(list(range(5)))))\n")
        run = self.run_script("fake-torch", script, python=sys.executable,
                              pythonpath=[HOOK_PATH, fake])
        self.assertOk(run)
        self.assertEqual(run.stdout.strip(), "5")
        self.assertNoErrors(run)
        got = {r["what"]: r["why"] for r in run.main("partial")}
        self.assertEqual(got, {
            "_SingleProcessDataLoaderIter.__init__": "not in this torch",
            "_MultiProcessingDataLoaderIter.__init__": "signature (self, dl) is not (self, loader, ...)",
            "_DatasetKind.create_fetcher": "not in this torch",
            "_utils.pin_memory.pin_memory": "not in this torch",
            "_utils.pin_memory._pin_memory_loop": "not in this torch"}, run.describe())
        self.assertEqual(run.main("versions")[0]["torch"], "9.0.0")
        self.assertEqual(len(run.main("batch")), 5)
        self.assertEqual([e["batches"] for e in run.main("epoch_end")], [5])

    @needs_torch
    def test_names_left_unpatched_are_reported_and_their_figures_absent(self):
        cfg = {"loaders": [loader_spec(n=16, sleep=0, batch_size=4, num_workers=2)],
               "plan": [[0, 1, None]]}
        ref = self.run_job("unpatched-ref", cfg, hook=False)
        run = self.run_job("unpatched", cfg, env={
            "MMPROF_HOOK_TEST_UNPATCHED": "_DatasetKind.create_fetcher,_BaseDataLoaderIter.__next__"})
        self.assertOk(ref)
        self.assertOk(run)
        self.assertEqual([b["fp"] for b in run.job("batch")], [b["fp"] for b in ref.job("batch")])
        self.assertNoErrors(run)
        self.assertEqual(sorted(r["what"] for r in run.main("partial")),
                         ["_BaseDataLoaderIter.__next__", "_DatasetKind.create_fetcher"])
        self.assertEqual(run.records("batch") + run.records("fetch") + run.records("getitem"), [])
        self.assertEqual(len(run.main("epoch")), 1)  # what was wrapped still records

if __name__ == "__main__":
    unittest.main()
