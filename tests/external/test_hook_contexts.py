"""Start methods, dataset kinds, torchvision ImageFolder, pinning, sampling."""

import os
import subprocess
import unittest

from hooktest import (JobCase, clean_env, loader_spec, needs_torch, torch_capability, torch_info,
                      torch_python)


@needs_torch
class StartMethodTests(JobCase):
    def check_workers(self, run, method):
        self.assertOk(run)
        self.assertNoErrors(run)
        ep = run.main("epoch")
        self.assertEqual(len(ep), 1)
        pids = ep[0]["worker_pids"]
        self.assertEqual(len(pids), 2)
        self.assertEqual(pids, run.job("epoch")[0]["pids"])
        self.assertEqual(ep[0]["start_method"], method)
        # the user's worker_init_fn ran in exactly those processes
        self.assertEqual(sorted(w["pid"] for w in run.wif), sorted(pids))
        self.assertEqual(sorted(w["id"] for w in run.wif), [0, 1])
        workers = run.worker_files()
        self.assertEqual(sorted(workers), sorted(pids))
        for pid, lines in workers.items():
            proc = lines[0]
            self.assertEqual((proc["role"], proc["loader"], proc["main_pid"]), ("worker", 0, run.main_pid))
            fetch = [r for r in lines if r["t"] == "fetch"]
            self.assertEqual(len(fetch), 2)
            for r in fetch:
                self.assertEqual((r["loader"], r["worker"], r["pid"], r["size"]), (0, proc["worker_id"], pid, 2))
        self.assertEqual(sorted(r["index"] for r in run.records("getitem")), list(range(8)))
        self.assertEqual(len(run.main("batch")), 4)

    def test_spawn_context_argument(self):
        run = self.run_job("spawn", {"loaders": [loader_spec(n=8, sleep=0.005, worker_init=True, batch_size=2,
                                                             num_workers=2, multiprocessing_context="spawn")],
                                     "plan": [[0, 1, None]]})
        self.check_workers(run, "spawn")
        self.assertEqual(run.main("loader")[0]["config"]["multiprocessing_context"], "spawn")

    def test_forkserver_start_method(self):
        run = self.run_job("forkserver", {"loaders": [loader_spec(n=8, sleep=0.005, worker_init=True,
                                                                  batch_size=2, num_workers=2)],
                                          "plan": [[0, 1, None]], "start_method": "forkserver"})
        self.check_workers(run, "forkserver")
        self.assertEqual(run.main("loader")[0]["config"]["multiprocessing_context"], "default")

    def test_spawn_child_that_builds_a_loader_before_becoming_a_worker(self):
        script = r'''
import torch
from torch.utils.data import DataLoader, TensorDataset
top = DataLoader(TensorDataset(torch.arange(4)), batch_size=2)   # also runs in spawn children
if __name__ == "__main__":
    dl = DataLoader(TensorDataset(torch.arange(8)), batch_size=2, num_workers=2,
                    multiprocessing_context="spawn")
    print(len(list(dl)))
'''
        run = self.run_script("spawn-toplevel", script)
        self.assertOk(run)
        self.assertEqual(run.stdout.strip(), "4")
        main = run.main_pid
        pids = run.main("epoch")[0]["worker_pids"]
        self.assertEqual([r["loader"] for r in run.main("loader")], [0, 1])
        for pid in pids:
            lines = run.files[pid]
            procs = [(k, r) for k, r in enumerate(lines) if r["t"] == "proc"]
            self.assertEqual([r["role"] for _, r in procs], ["main", "worker"])
            k, proc = procs[1]
            self.assertEqual((proc["loader"], proc["main_pid"]), (1, main))
            self.assertTrue(all(r["t"] != "fetch" for r in lines[:k]))
            self.assertTrue(all(r["loader"] == 1 for r in lines[k:] if r["t"] == "fetch"))
            self.assertEqual(sum(r["t"] == "fetch" for r in lines[k:]), 2)

    def test_fork_without_worker_init_fn(self):
        run = self.run_job("fork-noinit", {"loaders": [loader_spec(n=8, sleep=0, batch_size=2, num_workers=2,
                                                                   multiprocessing_context="fork")],
                                           "plan": [[0, 1, None]]})
        self.assertOk(run)
        self.assertIsNone(run.main("loader")[0]["config"]["worker_init_fn"])
        self.assertEqual(len(run.worker_files()), 2)
        self.assertEqual(len(run.records("fetch")), 4)


@needs_torch
class DatasetKindTests(JobCase):
    def test_iterable_dataset(self):
        run = self.run_job("iterable", {"loaders": [loader_spec(n=12, sleep=0, dataset="stream",
                                                                batch_size=3, num_workers=2)],
                                        "plan": [[0, 1, None]]})
        self.assertOk(run)
        self.assertNoErrors(run)
        b = run.main("batch")
        self.assertEqual([r["size"] for r in b], [3, 3, 3, 3])
        self.assertEqual(run.main("epoch_end")[0]["batches"], 4)
        for pid, lines in run.worker_files().items():
            g = [r for r in lines if r["t"] == "getitem"]
            self.assertEqual([r["index"] for r in g], list(range(6)))   # running count
            f = [r for r in lines if r["t"] == "fetch"]
            self.assertEqual([r["size"] for r in f], [3, 3])
        self.assertEqual(run.main("loader")[0]["config"]["sampler"], "_InfiniteConstantSampler")

    def test_getitems_dataset(self):
        run = self.run_job("getitems", {"loaders": [loader_spec(n=8, sleep=0.001, dataset="batched",
                                                                batch_size=4, num_workers=0)],
                                        "plan": [[0, 1, None]]})
        self.assertOk(run)
        g = run.records("getitem")
        self.assertEqual([(r["index"], r["items"]) for r in g], [(0, 4), (4, 4)])
        self.assertTrue(all(r["dur_ns"] >= 4 * 0.001 * 1e9 for r in g))
        self.assertEqual([r["size"] for r in run.records("fetch")], [4, 4])

    def test_getitem_sampling(self):
        run = self.run_job("every3", {"loaders": [loader_spec(n=12, sleep=0, batch_size=4, num_workers=0)],
                                      "plan": [[0, 2, None]]},
                           env={"MMPROF_HOOK_GETITEM_EVERY": "3", "MMPROF_HOOK_DIGEST_BATCHES": "2"})
        self.assertOk(run)
        g = run.records("getitem")
        self.assertEqual([r["index"] for r in g], [0, 3, 6, 9] * 2)
        self.assertTrue(all(r["every"] == 3 for r in g))
        self.assertEqual(len(run.records("fetch")), 6)
        self.assertEqual([r["digest"] is not None for r in run.main("batch")], [True, True] + [False] * 4)

    def test_no_automatic_batching(self):
        run = self.run_job("nobatch", {"loaders": [loader_spec(n=3, sleep=0, batch_size=None, num_workers=0)],
                                       "plan": [[0, 1, None]]})
        self.assertOk(run)
        self.assertEqual([r["size"] for r in run.records("fetch")], [1, 1, 1])
        # a batch is one sample (a 3x4 tensor, an int): size = first dim
        self.assertEqual([r["size"] for r in run.main("batch")], [3, 3, 3])


IMAGES = r'''
import os, sys
from PIL import Image
root = sys.argv[1]
for cls, ext in (("cat", "png"), ("dog", "jpg")):
    os.makedirs(os.path.join(root, cls))
    for i in range(3):
        Image.new("RGB", (12, 10), (40 * i, 80, 120)).save(os.path.join(root, cls, "%d.%s" % (i, ext)))
'''


@needs_torch
class ImageFolderTests(JobCase):
    def test_imagefolder_transform_and_root(self):
        info = torch_info()
        if not info or not info["torchvision"]:
            self.skip_without(torch_capability(), "torchvision not installed beside torch")
        root = os.path.join(self.tmp, "images")
        subprocess.run([torch_python(), "-c", IMAGES, root], check=True, env=clean_env())
        spec = loader_spec(dataset="imagefolder", batch_size=2, num_workers=2)
        spec["root"] = root
        run = self.run_job("imagefolder", {"loaders": [spec], "plan": [[0, 1, None]]})
        self.assertOk(run)
        self.assertNoErrors(run)
        c = run.main("loader")[0]["config"]
        self.assertEqual(c["dataset"], "ImageFolder")
        self.assertEqual(c["dataset_root"], root)
        self.assertEqual(c["dataset_len"], 6)
        for part in ("Compose(", "Resize(", "ToTensor()"):
            self.assertIn(part, c["transform"])
        b = run.main("batch")
        self.assertEqual([r["size"] for r in b], [2, 2, 2])
        self.assertEqual(b[0]["bytes"], 2 * 3 * 8 * 9 * 4 + 2 * 8)   # 2 x float 3x8x9 (Resize(8) of 12x10) + 2 int64 labels
        self.assertEqual(sorted(r["index"] for r in run.records("getitem")), list(range(6)))
        # Inside __getitem__: the dataset's loader (its read and decode) and each transform of
        # its Compose, nested in the item's own time.
        for r in run.records("getitem"):
            self.assertEqual(sorted(r["parts"]), ["Resize", "ToTensor", "decode"], r)
            self.assertTrue(all(ns > 0 for ns in r["parts"].values()), r)
            self.assertLessEqual(sum(r["parts"].values()), r["dur_ns"], r)


@needs_torch
class PinTests(JobCase):
    """The pin path.  Without a GPU, torch 1.x is told CUDA is there
    (fake_cuda) and the batches are objects whose pin_memory() needs no
    device; with a GPU (the device check) real tensors are pinned."""

    def pin_run(self, name, num_workers, fake=True):
        spec = loader_spec(n=8, sleep=0, batch_size=2, num_workers=num_workers, pin_memory=True)
        spec["pinnable"] = fake
        return self.run_job(name, {"loaders": [spec], "plan": [[0, 1, None]], "fake_cuda": fake})

    def check_pins(self, run, main_thread):
        self.assertOk(run)
        self.assertNoErrors(run)
        if not run.job("epoch")[0]["pin"]:
            self.skipTest("this torch does not take the pin path without an accelerator")
        pins = run.main("pin")
        b = run.main("batch")
        self.assertEqual(len(pins), len(b))
        self.assertEqual(len(b), 4)
        for p in pins:
            self.assertEqual(p["loader"], 0)
            self.assertLessEqual(p["start_ns"], p["end_ns"])
            if main_thread:
                self.assertEqual(p["thread"], "MainThread")
            else:
                self.assertNotEqual(p["thread"], "MainThread")
        if main_thread:  # pinned inside __next__
            for p, r in zip(pins, b):
                self.assertTrue(r["call_ns"] <= p["start_ns"] <= p["end_ns"] <= r["ret_ns"])
        self.assertTrue(run.main("epoch")[0]["pin_memory"])

    def test_pin_thread(self):
        self.check_pins(self.pin_run("pin-thread", 2), main_thread=False)

    def test_pin_in_main_process(self):
        self.check_pins(self.pin_run("pin-main", 0), main_thread=True)

    def test_real_pinning_on_gpu(self):
        info = torch_info()
        if not info or not info["cuda"]:
            self.skip_without("cuda", "no CUDA device")
        run = self.pin_run("pin-gpu", 2, fake=False)
        self.check_pins(run, main_thread=False)
        self.assertTrue(run.main("versions")[0]["cuda_available"])
        self.assertEqual(run.main("versions")[0]["cuda_check"], "nvml")


if __name__ == "__main__":
    unittest.main()
