"""DataLoader subclasses and the loaders built on DataLoader: torchdata's StatefulDataLoader
(its own __init__, __iter__ and iterator classes, none calling torch's), a job's own subclass,
WebDataset's WebLoader (a DataLoader inside a pipeline). Each batch is recorded exactly once,
the workers' fetches are found, nothing is reported as an error."""

import json
import os
import unittest

from hooktest import JobCase, needs_torch

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

@needs_torch
class SubclassTests(JobCase):
    def test_stateful_dataloader_resumes_and_every_batch_is_recorded_once(self):
        self.need_module("torchdata.stateful_dataloader")
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
        self.need_module("torchdata.stateful_dataloader")
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
        self.need_module("webdataset")
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
        self.need_module("nvidia.dali.plugin.pytorch")
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


if __name__ == "__main__":
    unittest.main()
