"""A torchdata.nodes training loop written the way its documentation shows one: a torchvision
ImageFolder of JPEG files, its indices from a RandomSampler (SamplerWrapper), read and decoded by
a ParallelMapper of WORKERS threads (or processes: METHOD process), batched, collated, prefetched
and read through a Loader (not a DataLoader).

  nodes_job.py write DIR SAMPLES                 JPEG files (480x640) in 10 class folders
  nodes_job.py train DIR OUT STEP_MS WORKERS [METHOD]
"""
import sys

import torch
import torchdata.nodes as tn
from torch.utils.data import RandomSampler, default_collate
from torchvision import datasets

import job_common


def train(root, out, step_ms, workers):
    ds = datasets.ImageFolder(root, transform=job_common.to_tensor)
    # MapStyleWrapper with its Mapper replaced by a ParallelMapper, as its docstring says to.
    node = tn.SamplerWrapper(RandomSampler(ds))
    method = sys.argv[6] if len(sys.argv) > 6 else "thread"
    # Processes are spawned: torchdata forks them from a Prefetcher's thread, and a fork while
    # another thread of the job is inside torch can leave a worker locked for ever (3 of 5 runs
    # of this job with the default fork context, without mmprof).
    node = tn.ParallelMapper(node, map_fn=ds.__getitem__, num_workers=workers, method=method,
                             multiprocessing_context="spawn" if method == "process" else None)
    node = tn.Batcher(node, batch_size=8, drop_last=True)
    node = tn.ParallelMapper(node, map_fn=default_collate, num_workers=1, method="thread")
    node = tn.Prefetcher(node, prefetch_factor=2)
    job_common.train(tn.Loader(node), out, step_ms)


if __name__ == "__main__":
    job_common.main(job_common.write_image_folder, train)
