"""An NVIDIA DALI training loop written the way its documentation shows one, on the CPU: a
pipeline of fn.readers.file over a folder of JPEG files in class folders, fn.decoders.image
(device "cpu") and fn.resize, driven by the PyTorch plugin's DALIGenericIterator (not a torch
DataLoader), reset at each epoch's end.

  dali_job.py write DIR SAMPLES                 JPEG files (480x640) in 10 class folders
  dali_job.py train DIR OUT STEP_MS THREADS
"""
import os
import time

from nvidia.dali import fn, pipeline_def
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

import job_common


@pipeline_def
def images(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
    decoded = fn.decoders.image(jpegs, device="cpu")
    return fn.resize(decoded, resize_x=128, resize_y=96), labels


def train(root, out, step_ms, threads):
    """The first wait counts the iterator's construction: it builds the pipeline and runs it for
    the first batch."""
    pipe = images(root, batch_size=8, num_threads=threads, device_id=None)
    with open(os.path.join(out, "job-waits.txt"), "w") as waits:
        t0 = time.perf_counter()
        loader = DALIGenericIterator([pipe], ["images", "labels"], reader_name="Reader",
                                     last_batch_policy=LastBatchPolicy.PARTIAL)
        while True:
            for batch in loader:
                waits.write("%.6f\n" % ((time.perf_counter() - t0) * 1000))
                waits.flush()
                time.sleep(step_ms / 1000)  # the training step on batch[0]["images"]
                t0 = time.perf_counter()
            loader.reset()
            t0 = time.perf_counter()


if __name__ == "__main__":
    job_common.main(job_common.write_image_folder, train)
