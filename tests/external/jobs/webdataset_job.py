"""A WebDataset 1.0 training loop written the way its documentation shows one: tar shards
written by wds.ShardWriter, read by wds.WebDataset (split_by_node, split_by_worker), decoded to
PIL, mapped to tensors, batched in the dataset and handed to wds.WebLoader. The job times its
own wait for every batch with perf_counter (job-waits.txt), the check of mmprof's figures.

  webdataset_job.py write DIR SHARDS PER_SHARD       JPEG samples (480x640) with a class
  webdataset_job.py train DIR SHARDS OUT STEP_MS WORKERS
"""
import io
import os
import sys
import time

import numpy as np
import torch
import webdataset as wds
from PIL import Image


def write(root, shards, per_shard):
    os.makedirs(root, exist_ok=True)
    rng = np.random.default_rng(0)
    with wds.ShardWriter(os.path.join(root, "shard-%06d.tar"), maxcount=per_shard) as sink:
        for i in range(shards * per_shard):
            pixels = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
            buf = io.BytesIO()
            Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
            sink.write({"__key__": "%06d" % i, "jpg": buf.getvalue(), "cls": str(i % 10)})


def to_tensor(img):
    a = np.asarray(img.resize((128, 96)), dtype=np.uint8)
    return torch.from_numpy(a.copy()).permute(2, 0, 1).float().div_(255)


def train(root, shards, out, step_ms, workers):
    urls = os.path.join(root, "shard-{%06d..%06d}.tar" % (0, shards - 1))
    dataset = (wds.WebDataset(urls, shardshuffle=False, nodesplitter=wds.split_by_node,
                              workersplitter=wds.split_by_worker)
               .decode("pil")
               .to_tuple("jpg", "cls")
               .map_tuple(to_tensor, int)
               .batched(8))
    loader = wds.WebLoader(dataset, batch_size=None, num_workers=workers)
    with open(os.path.join(out, "job-waits.txt"), "w") as waits:
        for _ in range(1000):
            it = iter(loader)
            while True:
                t0 = time.perf_counter()
                try:
                    images, labels = next(it)
                except StopIteration:
                    break
                waits.write("%.6f\n" % ((time.perf_counter() - t0) * 1000))
                waits.flush()
                time.sleep(step_ms / 1000)  # the training step


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        train(sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5]), int(sys.argv[6]))
