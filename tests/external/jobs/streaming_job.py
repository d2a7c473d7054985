"""A MosaicML Streaming training loop written the way its documentation shows one: MDS shards
written by MDSWriter, read by a StreamingDataset subclass that decodes each sample, in a
torch DataLoader whose batch_size is the dataset's (Streaming partitions by it).

  streaming_job.py write DIR SAMPLES                 JPEG samples (480x640) with a class
  streaming_job.py train DIR OUT STEP_MS WORKERS
"""

import torch
from streaming import MDSWriter, StreamingDataset

import job_common

BATCH = 8


class Images(StreamingDataset):
    def __getitem__(self, index):
        sample = super().__getitem__(index)
        return job_common.decode(sample["jpg"]), sample["cls"]


def write(root, samples):
    # 1 MB shards: about 3 samples each, so that each worker streams several shards.
    with MDSWriter(out=root, columns={"jpg": "bytes", "cls": "int"}, size_limit=1 << 20) as sink:
        for _, jpeg, cls in job_common.jpeg_samples(samples):
            sink.write({"jpg": jpeg, "cls": cls})


def train(root, out, step_ms, workers):
    dataset = Images(local=root, batch_size=BATCH, shuffle=False)
    loader = torch.utils.data.DataLoader(dataset, batch_size=BATCH, num_workers=workers)
    job_common.train(loader, out, step_ms)


if __name__ == "__main__":
    job_common.main(write, train)
