"""A LitData training loop written the way its documentation shows one: litdata.optimize turns
the samples into chunks, a StreamingDataset subclass decodes each sample and a
StreamingDataLoader (a torch DataLoader) batches them.

  litdata_job.py write DIR SAMPLES                   JPEG samples (480x640) with a class
  litdata_job.py train DIR OUT STEP_MS WORKERS
"""

import litdata as ld

import job_common


def sample(index):
    jpeg, cls = job_common.jpeg_sample(index)
    return {"jpg": jpeg, "cls": cls}


class Images(ld.StreamingDataset):
    def __getitem__(self, index):
        item = super().__getitem__(index)
        return job_common.decode(item["jpg"]), item["cls"]


def write(root, samples):
    ld.optimize(fn=sample, inputs=list(range(samples)), output_dir=root, chunk_bytes="1MB",
                num_workers=1)


def train(root, out, step_ms, workers):
    job_common.train(ld.StreamingDataLoader(Images(root), batch_size=8, num_workers=workers), out,
                     step_ms)


if __name__ == "__main__":
    job_common.main(write, train)
