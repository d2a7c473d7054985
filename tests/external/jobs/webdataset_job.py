"""A WebDataset 1.0 training loop written the way its documentation shows one: tar shards
written by wds.ShardWriter, read by wds.WebDataset (split_by_node, split_by_worker), decoded to
PIL, mapped to tensors, batched in the dataset and handed to wds.WebLoader.

  webdataset_job.py write DIR SHARDS PER_SHARD       JPEG samples (480x640) with a class
  webdataset_job.py train DIR SHARDS OUT STEP_MS WORKERS
"""
import os
import sys

import webdataset as wds

import job_common


def write(root, shards, per_shard):
    os.makedirs(root, exist_ok=True)
    with wds.ShardWriter(os.path.join(root, "shard-%06d.tar"), maxcount=per_shard) as sink:
        for i, jpeg, cls in job_common.jpeg_samples(shards * per_shard):
            sink.write({"__key__": "%06d" % i, "jpg": jpeg, "cls": str(cls)})


def train(root, shards, out, step_ms, workers):
    urls = os.path.join(root, "shard-{%06d..%06d}.tar" % (0, shards - 1))
    dataset = (wds.WebDataset(urls, shardshuffle=False, nodesplitter=wds.split_by_node,
                              workersplitter=wds.split_by_worker)
               .decode("pil")
               .to_tuple("jpg", "cls")
               .map_tuple(job_common.to_tensor, int)
               .batched(8))
    job_common.train(wds.WebLoader(dataset, batch_size=None, num_workers=workers), out, step_ms)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        train(sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5]), int(sys.argv[6]))
