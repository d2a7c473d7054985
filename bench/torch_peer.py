#!/usr/bin/python3
"""The PyTorch DataLoader peer of mmprof's loader (bench/README.md, "speed_bench").

Runs torch.utils.data.DataLoader over an mmprof dataset folder (files layout) with the transforms
mmprof applies: images RandomResizedCrop(size) + horizontal flip + ToTensor + Normalize (ImageNet
mean/std), clips of `frames` uniformly spaced frames resized to size x size, normalized the same
way, captions as byte tokens padded to seq_len. Mixed batches are collated per modality, as
mmprof's Batch holds them. Prints one JSON object: throughput over the timed epochs (first batch
excluded, like mmprof's pipeline phase), time to first batch and the workers' PSS/USS/RSS peaks
read from /proc/PID/smaps_rollup while running.

Images (--decoder):
  pil        PIL decode of the whole image, torchvision's PIL transforms (the usual recipe);
  pil-draft  the strongest PIL a user can write: the crop drawn first on the image's header, the
             JPEG decoded DCT-scaled (Image.draft) as far as the crop keeps `size` pixels, the
             crop resized straight from the reduced image;
  tvio       torchvision.io's libjpeg-turbo decode into a uint8 tensor, tensor transforms.
Clips (--video-reader):
  pyav       PyAV (one thread), frames scaled by swscale;
  tvio       torchvision.io.VideoReader (torchvision's C++ FFmpeg reader, one thread), frames
             resized by torchvision (antialiased bilinear).

Needs Debian's /usr/bin/python3 with python3-torch, python3-torchvision and python3-av.
"""
import argparse
import json
import os
import threading
import time

import av
import numpy as np
import torch
import torchvision
import torchvision.io as tvio
import torchvision.transforms as T
import torchvision.transforms.functional as F
from PIL import Image

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
IMAGE_EXT = (".jpg", ".jpeg", ".png")
VIDEO_EXT = (".mp4",)


def list_samples(root):
    """(media path, caption path or None) per sample key, sorted by key."""
    names = set(os.listdir(root))
    samples = []
    for name in sorted(names):
        stem, ext = os.path.splitext(name)
        if ext.lower() in IMAGE_EXT + VIDEO_EXT:
            caption = stem + ".txt"
            samples.append((os.path.join(root, name),
                            os.path.join(root, caption) if caption in names else None))
    return samples


def spaced_frames(frames, total, count, convert):
    """convert() of `count` uniformly spaced frames of a clip of `total` frames, taken from the
    iterator `frames` in order up to the last one wanted (the usual clip reader); the last one
    repeated if the clip ends early."""
    wanted = np.linspace(0, max(total - 1, 0), count).round().astype(int).tolist()
    picked = []
    for index, frame in enumerate(frames):
        while wanted and index == wanted[0]:
            picked.append(convert(frame))
            wanted.pop(0)
        if not wanted:
            break
    while len(picked) < count:
        picked.append(picked[-1])
    return picked


class MediaDataset(torch.utils.data.Dataset):
    def __init__(self, root, size, frames, seq_len, decoder, video_reader):
        self.samples = list_samples(root)
        self.frames = frames
        self.size = size
        self.seq_len = seq_len
        self.normalize = T.Normalize(MEAN, STD)
        self.crop = T.RandomResizedCrop(size)
        self.flip_to_tensor = T.Compose([T.RandomHorizontalFlip(), T.ToTensor(), self.normalize])
        self.tensor_tf = T.Compose([T.RandomResizedCrop(size, antialias=True),
                                    T.RandomHorizontalFlip(), T.ConvertImageDtype(torch.float32),
                                    self.normalize])
        self.image = {"pil": self.image_pil, "pil-draft": self.image_pil_draft,
                      "tvio": self.image_tvio}[decoder]
        self.clip_frames = {"pyav": self.clip_pyav, "tvio": self.clip_tvio}[video_reader]

    def __len__(self):
        return len(self.samples)

    def tokens(self, caption_path):
        data = b""
        if caption_path:
            with open(caption_path, "rb") as f:
                data = f.read(self.seq_len)
        out = torch.zeros(self.seq_len, dtype=torch.int32)
        if data:
            out[:len(data)] = torch.frombuffer(bytearray(data), dtype=torch.uint8).to(torch.int32)
        return out

    def image_pil(self, path):
        with Image.open(path) as image:
            return self.flip_to_tensor(self.crop(image.convert("RGB")))

    def image_pil_draft(self, path):
        # torchvision's crop box drawn on the full-size image (from its header: nothing decoded
        # yet), then the largest DCT scale 1/s that leaves the crop `size` pixels on both sides.
        # Asked for (W // s, H // s), PIL takes the largest of 8, 4, 2, 1 not above
        # min(W // (W // s), H // (H // s)): s itself, as W and H >= s x size >= s x s. draft()
        # returns the full image's box in the reduced image (None for a PNG: not reduced), hence
        # the scale; the crop box is mapped onto the reduced image and resized from there in one
        # step (PIL's resize of a fractional box, antialiased bilinear as torchvision's PIL
        # path: no reducing_gap).
        with Image.open(path) as image:
            top, left, height, width = self.crop.get_params(image, self.crop.scale,
                                                            self.crop.ratio)
            s = next((k for k in (8, 4, 2) if min(height, width) >= k * self.size), 1)
            full_width = image.width
            drafted = image.draft("RGB", (image.width // s, image.height // s))
            scale = full_width / drafted[1][2] if drafted else 1
            if image.mode != "RGB":
                image = image.convert("RGB")
            box = (left / scale, top / scale, (left + width) / scale, (top + height) / scale)
            return self.flip_to_tensor(image.resize((self.size, self.size),
                                                    Image.Resampling.BILINEAR, box=box,
                                                    reducing_gap=None))

    def image_tvio(self, path):
        data = tvio.read_file(path)
        decode = tvio.decode_jpeg if path.lower().endswith((".jpg", ".jpeg")) else tvio.decode_image
        return self.tensor_tf(decode(data, mode=tvio.ImageReadMode.RGB))

    def clip_pyav(self, path):
        # Frames scaled by swscale to size x size, like mmprof's video path.
        with av.open(path) as container:
            stream = container.streams.video[0]
            stream.thread_count = 1
            total = stream.frames or int(float(stream.duration * stream.time_base) *
                                         float(stream.average_rate))
            picked = spaced_frames(container.decode(stream), total, self.frames,
                                   lambda frame: frame.to_ndarray(width=self.size,
                                                                  height=self.size,
                                                                  format="rgb24"))
        return torch.from_numpy(np.stack(picked)).permute(0, 3, 1, 2)

    def clip_tvio(self, path):
        # VideoReader's metadata has the duration and frame rate, not the frame count.
        reader = tvio.VideoReader(path, "video", num_threads=1)
        meta = reader.get_metadata()["video"]
        total = round(meta["duration"][0] * meta["fps"][0])
        return torch.stack(spaced_frames(reader, total, self.frames,
                                         lambda frame: F.resize(frame["data"],
                                                                [self.size, self.size],
                                                                antialias=True)))

    def __getitem__(self, index):
        path, caption = self.samples[index]
        if path.lower().endswith(VIDEO_EXT):
            video = self.clip_frames(path).float().div_(255)
            return "video", self.normalize(video), self.tokens(caption)
        return "image", self.image(path), self.tokens(caption)


def collate(batch):
    images = [x for kind, x, _ in batch if kind == "image"]
    videos = [x for kind, x, _ in batch if kind == "video"]
    return (torch.stack(images) if images else None, torch.stack(videos) if videos else None,
            torch.stack([t for _, _, t in batch]))


def smaps_rollup(pid):
    fields = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                    fields[parts[0][:-1]] = int(parts[1])
    except OSError:
        return None
    uss = fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
    return {"rss_kb": fields.get("Rss", 0), "pss_kb": fields.get("Pss", 0), "uss_kb": uss}


class WorkerMemory:
    """Peaks of each DataLoader worker's smaps_rollup, read every `period` seconds."""

    def __init__(self, period):
        self.period = period
        self.peaks = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def children(self):
        try:
            with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as f:
                return [int(p) for p in f.read().split()]
        except OSError:
            return []

    def run(self):
        while not self.stop.wait(self.period):
            for pid in self.children():
                sample = smaps_rollup(pid)
                if sample:
                    peak = self.peaks.setdefault(pid, dict.fromkeys(sample, 0))
                    for key, value in sample.items():
                        peak[key] = max(peak[key], value)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="mmprof dataset folder (files layout)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--prefetch", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=77)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--decoder", choices=("pil", "pil-draft", "tvio"), default="pil",
                        help="image decode and transforms (see above)")
    parser.add_argument("--video-reader", choices=("pyav", "tvio"), default="pyav",
                        help="clip reader (see above)")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    dataset = MediaDataset(args.data, args.size, args.frames, args.seq_len, args.decoder,
                           args.video_reader)
    extra = {"prefetch_factor": args.prefetch, "persistent_workers": True} if args.workers else {}
    start = time.perf_counter()
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                                         num_workers=args.workers, collate_fn=collate, **extra)
    samples = 0
    first_batch_s = None
    with WorkerMemory(0.1) as memory:
        for epoch in range(args.epochs):
            for images, videos, tokens in loader:
                if first_batch_s is None:
                    first_batch_s = time.perf_counter()
                    continue
                samples += tokens.shape[0]
    end = time.perf_counter()
    peaks = list(memory.peaks.values())
    print(json.dumps({
        "loader": "torch.utils.data.DataLoader", "torch": torch.__version__,
        "torchvision": torchvision.__version__, "decoder": args.decoder,
        "reader": {"pyav": f"PyAV {av.__version__}",
                   "tvio": "torchvision.io.VideoReader (video_reader backend)"}[args.video_reader],
        "workers": args.workers, "batch_size": args.batch_size, "epochs": args.epochs,
        "samples": samples, "samples_per_s": samples / (end - first_batch_s),
        "time_to_first_batch_ms": (first_batch_s - start) * 1e3,
        "worker_pss_peak_kb": [p["pss_kb"] for p in peaks],
        "worker_uss_peak_kb": [p["uss_kb"] for p in peaks],
        "worker_rss_peak_kb": [p["rss_kb"] for p in peaks],
    }))


if __name__ == "__main__":
    main()
