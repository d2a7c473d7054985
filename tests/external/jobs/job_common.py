"""What the loader jobs share: the samples they write and the training loop that times its own
wait for every batch with perf_counter (job-waits.txt), the check of mmprof's figures."""
import io
import os
import sys
import time

import numpy as np
import torch
from PIL import Image


def jpeg_sample(index):
    """(JPEG bytes of a 480x640 noise image, class) of sample `index`, the same every run."""
    pixels = np.random.default_rng(index).integers(0, 256, (480, 640, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
    return buf.getvalue(), index % 10


def jpeg_samples(count):
    """(index, JPEG bytes, class) of samples 0 to count - 1."""
    for i in range(count):
        yield (i,) + jpeg_sample(i)


def write_image_folder(root, samples):
    """The samples as JPEG files in 10 class folders (ImageFolder's layout): ROOT/classC/NNNNN.jpg."""
    for i, jpeg, cls in jpeg_samples(samples):
        folder = os.path.join(root, "class%d" % cls)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "%05d.jpg" % i), "wb") as f:
            f.write(jpeg)


def to_tensor(img):
    """A decoded PIL image as the model's input: 96x128, float in [0, 1], channels first."""
    a = np.asarray(img.convert("RGB").resize((128, 96)), dtype=np.uint8)
    return torch.from_numpy(a.copy()).permute(2, 0, 1).float().div_(255)


def decode(jpeg):
    return to_tensor(Image.open(io.BytesIO(jpeg)))


def train(loader, out, step_ms, epochs=1000):
    """Epoch after epoch over `loader`: the wait for each batch written to OUT/job-waits.txt,
    then a `step_ms` training step (a sleep)."""
    with open(os.path.join(out, "job-waits.txt"), "w") as waits:
        for _ in range(epochs):
            it = iter(loader)
            while True:
                t0 = time.perf_counter()
                try:
                    next(it)
                except StopIteration:
                    break
                waits.write("%.6f\n" % ((time.perf_counter() - t0) * 1000))
                waits.flush()
                time.sleep(step_ms / 1000)  # the training step


def main(write, train):
    """The command line the jobs share: `write DIR SAMPLES` or `train DIR OUT STEP_MS WORKERS`."""
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]))
    else:
        train(sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]))
