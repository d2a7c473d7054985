"""A Hugging Face datasets training loop written the way its documentation shows one: the samples
saved as an Arrow dataset (Dataset.from_generator with an Image feature, save_to_disk), loaded
back with load_from_disk, decoded on access by with_transform, and batched by a torch
DataLoader over the map-style dataset.

  hf_datasets_job.py write DIR SAMPLES                JPEG samples (480x640) with a class
  hf_datasets_job.py train DIR OUT STEP_MS WORKERS
"""

import datasets
import torch

import job_common


def write(root, samples):
    datasets.disable_progress_bars()

    def rows():
        for _, jpeg, cls in job_common.jpeg_samples(samples):
            yield {"image": {"bytes": jpeg, "path": None}, "label": cls}

    features = datasets.Features({"image": datasets.Image(), "label": datasets.Value("int64")})
    ds = datasets.Dataset.from_generator(rows, features=features, cache_dir=root + ".cache")
    ds.save_to_disk(root, max_shard_size="10MB")


def to_model(batch):
    return {"image": [job_common.to_tensor(img) for img in batch["image"]],
            "label": batch["label"]}


def train(root, out, step_ms, workers):
    ds = datasets.load_from_disk(root).with_transform(to_model)
    job_common.train(torch.utils.data.DataLoader(ds, batch_size=8, num_workers=workers), out,
                     step_ms)


if __name__ == "__main__":
    job_common.main(write, train)
