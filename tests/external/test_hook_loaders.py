"""DataLoader subclasses and the loaders built on DataLoader: torchdata's StatefulDataLoader
(its own __init__, __iter__ and iterator classes, none calling torch's), a job's own subclass,
WebDataset's WebLoader (a DataLoader inside a pipeline). Each batch is recorded exactly once,
the workers' fetches are found, nothing is reported as an error."""

import json
import os
import subprocess
import unittest

from hooktest import JobCase, needs_torch, torch_python

STATEFUL = r'''
import json, sys, time, torch
from torch.utils.data import Dataset
from torchdata.stateful_dataloader import StatefulDataLoader

class Items(Dataset):
    def __len__(self):
        return 32
    def __getitem__(self, i):
        time.sleep(0.002)
        return torch.full((3,), float(i))

nw = int(sys.argv[1])
dl = StatefulDataLoader(Items(), batch_size=4, num_workers=nw, persistent_workers=nw > 0)
it = iter(dl)
seen = [next(it)[:, 0].tolist() for _ in range(3)]
state = dl.state_dict()
resumed = StatefulDataLoader(Items(), batch_size=4, num_workers=nw)
resumed.load_state_dict(state)
rest = [b[:, 0].tolist() for b in resumed]
print(json.dumps({"seen": seen, "rest": rest}))
'''

# A job's own subclass: __iter__ returns its own iterator class, whose __next__ does not call
# torch's; another subclass only adds to __init__ (and calls DataLoader's).
OWN = r'''
import json, torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.dataloader import _SingleProcessDataLoaderIter

class CountingIter(_SingleProcessDataLoaderIter):
    def __next__(self):
        self.count = getattr(self, "count", 0) + 1
        return self._next_data()

class Counting(DataLoader):
    def __iter__(self):
        return CountingIter(self)

class Named(DataLoader):
    def __init__(self, *args, name="x", **kwargs):
        super().__init__(*args, **kwargs)
        self.name = name

ds = TensorDataset(torch.arange(12))
a = [b[0].tolist() for b in Counting(ds, batch_size=4)]
b = [b[0].tolist() for b in Named(ds, batch_size=6, name="y")]
print(json.dumps({"a": a, "b": b}))
'''

WEBDATASET = r'''
import io, json, os, sys
import numpy as np
import webdataset as wds
from PIL import Image

root = sys.argv[1]
with wds.ShardWriter(os.path.join(root, "shard-%06d.tar"), maxcount=8) as sink:
    for i in range(16):
        buf = io.BytesIO()
        Image.fromarray(np.full((16, 16, 3), i, np.uint8)).save(buf, format="PNG")
        sink.write({"__key__": "%04d" % i, "png": buf.getvalue(), "cls": str(i)})
os.chdir(root)  # a relative URL pattern: the hook records it absolute
urls = "shard-{000000..000001}.tar"
dataset = (wds.WebDataset(urls, shardshuffle=False, nodesplitter=wds.split_by_node,
                          workersplitter=wds.split_by_worker)
           .decode("rgb8").to_tuple("png", "cls").batched(4))
loader = wds.WebLoader(dataset, batch_size=None, num_workers=2)
print(json.dumps({"batches": sum(1 for _ in loader)}))
'''

# A DALI pipeline as its documentation writes one (pipeline_def, the PyTorch plugin's iterator).
DALI = r'''
import json
from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import DALIGenericIterator

@pipeline_def
def numbers():
    return fn.random.uniform(shape=[4])

p = numbers(batch_size=8, num_threads=2, device_id=None, prefetch_queue_depth=2)
it = DALIGenericIterator([p], ["x"], size=32)
print(json.dumps({"threads": p.num_threads, "depth": p.prefetch_queue_depth,
                  "batch": p.max_batch_size, "batches": sum(1 for _ in it)}))
'''

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


def _imports(module):
    py = torch_python()
    return py is not None and subprocess.run([py, "-c", "import " + module],
                                             capture_output=True).returncode == 0


@needs_torch
class SubclassTests(JobCase):
    def need(self, module):
        if not _imports(module):
            self.skip_without("torch2", "%s is not installed with this torch "
                              "(scripts/torch2-requirements.txt)" % module)

    def test_stateful_dataloader_resumes_and_every_batch_is_recorded_once(self):
        self.need("torchdata.stateful_dataloader")
        for nw in (0, 2):
            run = self.run_script("stateful-%d" % nw, STATEFUL, args=[str(nw)])
            self.assertOk(run)
            self.assertNoErrors(run)
            out = json.loads(run.stdout.strip().splitlines()[-1])
            self.assertEqual(out["rest"][0][0], 12.0)  # resumed after the 3 batches seen
            loaders = run.main("loader")
            self.assertEqual([l["config"]["num_workers"] for l in loaders], [nw, nw])
            self.assertEqual(loaders[0]["config"]["dataset"], "Items")
            batches = run.main("batch")
            self.assertEqual(len(batches), 3 + 5, run.describe())
            self.assertEqual([b["loader"] for b in batches], [0] * 3 + [1] * 5)
            fetched = sum(f["size"] for f in run.records("fetch"))
            self.assertGreaterEqual(fetched, 32)  # every item was fetched and timed
            if nw:
                self.assertEqual({r["role"] for r in run.records("proc")}, {"main", "worker"})
                workers = {f["worker"] for f in run.records("fetch")}
                self.assertEqual(workers, {0, 1})
            self.assertEqual(run.main("partial"), [])

    def test_a_jobs_own_subclass_and_iterator_are_recorded_once(self):
        run = self.run_script("own-subclass", OWN)
        self.assertOk(run)
        self.assertNoErrors(run)
        out = json.loads(run.stdout.strip().splitlines()[-1])
        self.assertEqual(out, {"a": [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]],
                               "b": [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]]})
        self.assertEqual([l["loader"] for l in run.main("loader")], [0, 1])
        self.assertEqual([(b["loader"], b["size"]) for b in run.main("batch")],
                         [(0, 4), (0, 4), (0, 4), (1, 6), (1, 6)])
        self.assertEqual([e["batches"] for e in run.main("epoch_end")], [3, 2])
        # the subclass's own iterator still built a fetcher in the main process
        self.assertEqual({f["worker"] for f in run.records("fetch")}, {-1})

    def test_overrides_reach_a_subclass_whether_or_not_it_names_them(self):
        # StatefulDataLoader names num_workers itself (and never calls DataLoader.__init__);
        # Named passes batch_size through **kwargs to DataLoader.__init__.
        self.need("torchdata.stateful_dataloader")
        script = r'''
import json, torch
from torch.utils.data import DataLoader, TensorDataset
from torchdata.stateful_dataloader import StatefulDataLoader

class Named(DataLoader):
    def __init__(self, *args, name="x", **kwargs):
        super().__init__(*args, **kwargs)

ds = TensorDataset(torch.arange(12))
s = StatefulDataLoader(ds, batch_size=6)
n = Named(ds, batch_size=6, name="y")
print(json.dumps({"stateful": [s.num_workers, s.batch_size], "named": [n.num_workers, n.batch_size],
                  "batches": [len(list(s)), len(list(n))]}))
'''
        run = self.run_script("subclass-overrides", script,
                              env={"MMPROF_HOOK_OVERRIDES": '{"num_workers": 1, "batch_size": 4}'})
        self.assertOk(run)
        self.assertNoErrors(run)
        out = json.loads(run.stdout.strip().splitlines()[-1])
        self.assertEqual(out, {"stateful": [1, 4], "named": [1, 4], "batches": [3, 3]})
        for rec in run.main("loader"):
            self.assertEqual(rec["overrides"]["applied"], {"num_workers": 1, "batch_size": 4})
            self.assertEqual(rec["overrides"]["original"], {"num_workers": 0, "batch_size": 6})
            self.assertEqual(rec["overrides"]["rejected"], {})

    def test_webdatasets_webloader_is_the_dataloader_inside_it(self):
        self.need("webdataset")
        wd = self.workdir("wds-shards")
        run = self.run_script("webdataset", WEBDATASET, args=[wd])
        self.assertOk(run)
        self.assertNoErrors(run)
        self.assertEqual(json.loads(run.stdout.strip().splitlines()[-1]), {"batches": 4})
        loader = run.main("loader")[0]
        self.assertEqual(loader["config"]["num_workers"], 2)
        self.assertIsNone(loader["config"]["batch_size"])
        self.assertEqual(len(run.main("batch")), 4)
        self.assertEqual({f["worker"] for f in run.records("fetch")}, {0, 1})
        self.assertEqual(loader["config"]["library"]["locations"],
                         [{"local": os.path.join(os.path.realpath(wd), "shard-%06d.tar" % i),
                           "remote": None} for i in (0, 1)])

    def test_overrides_reach_a_dali_pipeline_in_its_own_names(self):
        # loader.num_workers is DALI's num_threads, prefetch_factor its prefetch_queue_depth; a
        # DataLoader key DALI has not is refused, and so is what DALI cannot take.
        self.need("nvidia.dali.plugin.pytorch")
        ov = '{"num_workers": 3, "prefetch_factor": 1, "batch_size": 4, "pin_memory": true}'
        run = self.run_script("dali-overrides", DALI, env={"MMPROF_HOOK_OVERRIDES": ov})
        self.assertOk(run)
        self.assertNoErrors(run)
        out = json.loads(run.stdout.strip().splitlines()[-1])
        self.assertEqual(out, {"threads": 3, "depth": 1, "batch": 4, "batches": 8})
        rec = run.main("loader")[0]
        self.assertEqual(rec["overrides"]["applied"],
                         {"num_workers": 3, "prefetch_factor": 1, "batch_size": 4})
        self.assertEqual(rec["overrides"]["original"],
                         {"num_workers": 2, "prefetch_factor": 2, "batch_size": 8})
        self.assertIn("a DALI pipeline has no such setting",
                      rec["overrides"]["rejected"]["pin_memory"])
        self.assertEqual(rec["config"]["library"]["settings"]["num_threads"], 3)
        self.assertEqual(len(run.main("batch")), 8)

        run = self.run_script("dali-refused", DALI,
                              env={"MMPROF_HOOK_OVERRIDES": '{"num_workers": 0}'})
        self.assertOk(run)
        out = json.loads(run.stdout.strip().splitlines()[-1])
        self.assertEqual(out["threads"], 2)  # the job's own
        rec = run.main("loader")[0]
        self.assertEqual(rec["overrides"]["applied"], {})
        self.assertIn("needs num_threads >= 1", rec["overrides"]["rejected"]["num_workers"])

    def test_a_torchdata_nodes_loader_is_followed_like_a_dataloader(self):
        self.need("torchdata.nodes")
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
        self.need("torchdata.nodes")
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
        self.need("torchdata.nodes")
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
