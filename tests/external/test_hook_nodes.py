"""torchdata.nodes: a Loader over a graph of nodes (not a DataLoader) is followed like one; a
process ParallelMapper's workers are the loader's workers (fork-free start methods: torchdata
forks from a Prefetcher's thread, which can leave a worker locked inside torch for ever); the
DataLoader keys a graph's nodes hold are set on them, the others refused with the reason."""

import json
import unittest

from hooktest import JobCase, needs_torch

# torchdata.nodes as its documentation builds a loader: a map-style dataset through
# MapStyleWrapper (a ParallelMapper of threads), a Batcher, a Prefetcher, a Loader; two epochs.
NODES = r'''
import json, time
import torch
from torch.utils.data import Dataset, RandomSampler
import torchdata.nodes as tn

class Items(Dataset):
    def __len__(self):
        return 20
    def __getitem__(self, i):
        time.sleep(0.002)
        return torch.full((3,), float(i))

ds = Items()
node = tn.MapStyleWrapper(map_dataset=ds, sampler=RandomSampler(ds))
node = tn.ParallelMapper(node, map_fn=lambda x: x * 2, num_workers=2, method="thread")
node = tn.Batcher(node, batch_size=4, drop_last=False)
node = tn.ParallelMapper(node, map_fn=torch.utils.data.default_collate, num_workers=1,
                         method="thread")
node = tn.Prefetcher(node, prefetch_factor=3)
loader = tn.Loader(node)
sizes = [[len(b) for b in loader] for _ in range(2)]
print(json.dumps({"sizes": sizes}))
'''


# A process ParallelMapper (the start method from argv) over a map-style dataset, its items
# carrying the pid of the worker that made them, batched and prefetched: one epoch.
NODES_PROCESSES = r'''
import json, os, sys, time
import torch
from torch.utils.data import Dataset, SequentialSampler
import torchdata.nodes as tn

class Items(Dataset):
    def __len__(self):
        return 24
    def __getitem__(self, i):
        time.sleep(0.002)
        return torch.tensor([float(i), float(os.getpid())])

if __name__ == "__main__":
    ds = Items()
    node = tn.SamplerWrapper(SequentialSampler(ds))
    node = tn.ParallelMapper(node, map_fn=ds.__getitem__, num_workers=2, method="process",
                             multiprocessing_context=sys.argv[1], max_concurrent=2)
    node = tn.Batcher(node, batch_size=4, drop_last=False)
    node = tn.Prefetcher(node, prefetch_factor=2)
    loader = tn.Loader(node)
    batches = list(torch.stack(b) for b in loader)
    print(json.dumps({"sizes": [len(b) for b in batches],
                      "pids": sorted({int(p) for b in batches for p in b[:, 1].tolist()})}))
'''


@needs_torch
class NodesTests(JobCase):
    def test_a_torchdata_nodes_loader_is_followed_like_a_dataloader(self):
        self.need_module("torchdata.nodes")
        run = self.run_script("torchdata-nodes", NODES)
        self.assertOk(run)
        self.assertNoErrors(run)
        self.assertEqual(json.loads(run.stdout.strip().splitlines()[-1]),
                         {"sizes": [[4] * 5, [4] * 5]})
        rec, = run.main("loader")
        cfg = rec["config"]
        self.assertEqual(cfg["library"]["name"], "torchdata")
        self.assertEqual(cfg["library"]["class"], "torchdata.nodes.Loader")
        self.assertEqual([n["class"] for n in cfg["library"]["settings"]["nodes"]],
                         ["Prefetcher", "ParallelMapper", "Batcher", "ParallelMapper",
                          "ParallelMapper", "SamplerWrapper"])  # MapStyleWrapper's mapper 5th
        self.assertEqual(cfg["batch_size"], 4)
        self.assertEqual(cfg["prefetch_factor"], 3)
        self.assertIsNone(cfg["num_workers"])  # threads are not worker processes
        self.assertEqual(cfg["dataset"], "Items")
        self.assertEqual(cfg["dataset_len"], 20)
        self.assertEqual(cfg["sampler"], "RandomSampler")
        # each batch once (the Loader's look-ahead is not one), two epochs of 5
        batches = run.main("batch")
        self.assertEqual([(b["epoch"], b["i"], b["size"]) for b in batches],
                         [(e, i, 4) for e in range(2) for i in range(5)])
        self.assertEqual([e["batches"] for e in run.main("epoch_end")], [5, 5])
        self.assertEqual(len(run.main("epoch")), 2)
        # a DataLoader override reaches none of its nodes: refused, not silently ignored
        run = self.run_script("torchdata-nodes-overrides", NODES,
                              env={"MMPROF_HOOK_OVERRIDES": '{"num_workers": 4}'})
        self.assertOk(run)
        rec, = run.main("loader")
        self.assertEqual(rec["overrides"]["applied"], {})
        self.assertIn("runs threads (method='thread')", rec["overrides"]["rejected"]["num_workers"])

    def check_mapper_workers(self, run, workers):
        """The processes that made the items are the loader's workers, each with its section and
        its index (of `workers`; a spawned worker still importing torch when the short job ends
        never ran and has none)."""
        self.assertOk(run)
        self.assertNoErrors(run)
        out = json.loads(run.stdout.strip().splitlines()[-1])
        files = run.worker_files()
        self.assertTrue(set(out["pids"]) <= set(files), (out["pids"], sorted(files)))
        ids = sorted(lines[0]["worker_id"] for lines in files.values())
        self.assertEqual(len(set(ids)), len(ids), ids)
        self.assertTrue(set(ids) <= set(range(workers)), ids)
        for lines in files.values():
            self.assertEqual((lines[0]["loader"], lines[0]["main_pid"]), (0, run.main_pid))
        return out

    def test_a_process_mappers_workers_are_the_loaders_workers(self):
        self.need_module("torchdata.nodes")
        # not fork: torchdata forks from a Prefetcher's thread, which can leave a worker locked
        # inside torch for ever (a hazard of the job, with or without the hook)
        for method in ("forkserver", "spawn"):
            with self.subTest(method=method):
                run = self.run_script("nodes-processes-" + method, NODES_PROCESSES, args=(method,))
                out = self.check_mapper_workers(run, 2)
                self.assertEqual(out["sizes"], [4] * 6)
                cfg = run.main("loader")[0]["config"]
                self.assertEqual((cfg["num_workers"], cfg["multiprocessing_context"]), (2, method))

    def test_the_dataloader_keys_a_graphs_nodes_hold_are_set_on_them(self):
        self.need_module("torchdata.nodes")
        ov = {"num_workers": 3, "batch_size": 6, "prefetch_factor": 4, "in_order": False,
              "pin_memory": True, "persistent_workers": True}
        run = self.run_script("nodes-overrides", NODES_PROCESSES, args=("forkserver",),
                              env={"MMPROF_HOOK_OVERRIDES": json.dumps(ov)})
        out = self.check_mapper_workers(run, 3)
        self.assertEqual(out["sizes"], [6] * 4)  # 24 items in batches of 6
        rec, = run.main("loader")
        self.assertEqual(rec["overrides"]["applied"], {"num_workers": 3, "batch_size": 6,
                                                       "prefetch_factor": 4, "in_order": False})
        self.assertEqual(rec["overrides"]["original"], {"num_workers": 2, "batch_size": 4,
                                                        "prefetch_factor": 2, "in_order": True})
        rejected = rec["overrides"]["rejected"]
        self.assertIn("add a PinMemory node", rejected["pin_memory"])
        self.assertIn("no node that takes loader.persistent_workers", rejected["persistent_workers"])
        cfg = rec["config"]
        self.assertEqual((cfg["num_workers"], cfg["batch_size"], cfg["prefetch_factor"],
                          cfg["in_order"]), (3, 6, 4, False))
        # the node's own checks: a worker count under its max_concurrent, a start method that
        # does not exist
        run = self.run_script("nodes-overrides-refused", NODES_PROCESSES, args=("forkserver",),
                              env={"MMPROF_HOOK_OVERRIDES": json.dumps(
                                  {"num_workers": 1, "multiprocessing_context": "threads"})})
        self.check_mapper_workers(run, 2)
        rejected = run.main("loader")[0]["overrides"]["rejected"]
        self.assertIn("max_concurrent=2 > num_workers=1", rejected["num_workers"])
        self.assertIn("threads", rejected["multiprocessing_context"])


if __name__ == "__main__":
    unittest.main()
