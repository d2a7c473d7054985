"""A Lightning training loop written the way its documentation shows one: a LightningDataModule
whose train_dataloader() is a torch DataLoader over a torchvision ImageFolder of JPEG files, a
LightningModule, Trainer.fit on the CPU, accumulating gradients over 2 batches. Lightning's own SimpleProfiler times every fetch of a
batch ("[_TrainingEpochLoop].train_dataloader_next"); the job writes those durations to
OUT/job-waits.txt, the check of mmprof's figures.

  lightning_job.py write DIR SAMPLES                 JPEG files (480x640) in 10 class folders
  lightning_job.py train DIR OUT STEP_MS WORKERS
"""
import os
import time

import lightning.pytorch as L
import torch
from lightning.pytorch.profilers import SimpleProfiler
from torchvision import datasets

import job_common

FETCH = "[_TrainingEpochLoop].train_dataloader_next"


class Images(L.LightningDataModule):
    def __init__(self, root, workers):
        super().__init__()
        self.root = root
        self.workers = workers

    def train_dataloader(self):
        dataset = datasets.ImageFolder(self.root, transform=job_common.to_tensor)
        return torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=True,
                                           num_workers=self.workers)


class Model(L.LightningModule):
    def __init__(self, step_ms):
        super().__init__()
        self.step_s = step_ms / 1000
        self.head = torch.nn.Linear(3, 10)

    def training_step(self, batch, _):
        images, labels = batch
        time.sleep(self.step_s)  # the rest of the training step
        return torch.nn.functional.cross_entropy(self.head(images.mean(dim=(2, 3))), labels)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


class Waits(L.Callback):
    """Writes the profiler's fetch durations as they accrue (mmprof stops the job mid-fit)."""

    def __init__(self, profiler, out):
        self.profiler = profiler
        self.file = open(os.path.join(out, "job-waits.txt"), "w")
        self.written = 0

    def on_train_batch_start(self, trainer, module, batch, batch_idx):
        durations = self.profiler.recorded_durations[FETCH]
        for d in durations[self.written:]:
            self.file.write("%.6f\n" % (d * 1000))
        self.written = len(durations)
        self.file.flush()


def train(root, out, step_ms, workers):
    profiler = SimpleProfiler()
    trainer = L.Trainer(accelerator="cpu", devices=1, max_epochs=1000, profiler=profiler,
                        accumulate_grad_batches=2,
                        callbacks=[Waits(profiler, out)], logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(Model(step_ms), datamodule=Images(root, workers))


if __name__ == "__main__":
    job_common.main(job_common.write_image_folder, train)
