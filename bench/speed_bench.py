#!/usr/bin/python3
"""Speed benchmark: mmprof's loader against PyTorch's DataLoader and the hardware limit.

Protocol (bench/README.md, "speed_bench"): generated datasets (two image sets, clips in three
codecs), the same output (images 224x224 float32 normalized, clips 8x224x224, batch 32), every
arm run once as a warm-up, then REPS rounds in which all arms of a comparison run back to back in
a fresh shuffled order (seeded); medians and min-max spread per arm, ratios computed per round
from arms of the same round: mmprof against the best of the DataLoader peers (PIL, PIL with DCT
scaling, torchvision.io; PyAV, torchvision.io.VideoReader) at equal workers, and against the
independent decode limit (tjbench on every JPEG of the set). Writes results.json and SVG plots to
--out; docs/performance.md quotes them.
Run with Debian's /usr/bin/python3 (python3-torch, python3-torchvision, python3-av,
python3-matplotlib): `make speed-bench`.
"""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


IMAGE_WORKERS = (0, 1, 2)
DECODERS = ("pil", "pil-draft", "tvio")  # torch_peer.py --decoder
VIDEO_WORKERS = (1, 2)
VIDEO_READERS = ("pyav", "tvio")  # torch_peer.py --video-reader
DECODE_ARMS = ("mmprof decode", "ffmpeg -threads 1")
# Per section: the dataset's folder name ({n}: its size) and its `mmprof gen` arguments beyond
# --images/--videos. Both image sets are all JPEG; their clips are 1-4 s, up to 720p.
IMAGE_SETS = {"images": ("img{n}", ("--png-fraction", "0")),
              "images_uniform": ("img{n}-640x480",
                                 ("--png-fraction", "0", "--image-size", "640x480"))}
VIDEO_SETS = {"videos": ("vid{n}", ()),
              "videos_vp9": ("vid{n}-vp9", ("--video-codec", "vp9")),
              "videos_mpeg4": ("vid{n}-mpeg4", ("--video-codec", "mpeg4"))}
# tjbench on one JPEG: full-size decode to RGB (as mmprof's output) in its own loop, 0.05 s of
# warm-up, then 0.1 s timed; -nowrite: no decoded image written beside the input.
TJBENCH = ("-benchtime", "0.1", "-warmup", "0.05", "-quiet", "-nowrite", "-rgb")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


class Bench:
    def __init__(self, args):
        self.args = args
        self.mmprof = os.path.join(args.build, "src", "mmprof")
        self.work = args.work
        os.makedirs(self.work, exist_ok=True)
        self.rng = random.Random(args.seed)

    def dataset(self, name, *gen_args):
        path = os.path.join(self.work, name)
        if not os.path.exists(os.path.join(path, "dataset.json")):
            shutil.rmtree(path, ignore_errors=True)
            run([self.mmprof, "gen", "-o", path, "--layout", "files", "--seed", "1", *gen_args])
        return os.path.join(path, "files")

    def mmprof_arm(self, data, workers, mode="process", steps=16, **sets):
        out = os.path.join(self.work, "run")
        shutil.rmtree(out, ignore_errors=True)
        overrides = {"step.kind": "none", "loader.num_workers": workers,
                     "loader.worker_mode": mode, "phases.warmup_steps": 1,
                     "phases.steps": steps, "loader.batch_size": 32, **sets}
        cmd = [self.mmprof, "baseline", "--data", data, "--out", out]
        for key, value in overrides.items():
            cmd += ["--set", f"{key}={value}"]
        run(cmd)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        workers_mem = [w for w in (s.get("memory") or {}).get("workers") or []
                       if w.get("phase") == "pipeline"]
        return {"samples_per_s": s["throughput"]["pipeline"]["samples_per_s"],
                "time_to_first_batch_ms": s["time_to_first_batch_ms"],
                "worker_pss_peak_kb": [w["pss_peak_mib"] * 1024 for w in workers_mem
                                       if w.get("pss_peak_mib") is not None],
                "host_peak_mib": (s.get("memory") or {}).get("host_peak_mib"),
                "decode_ms_p50": s["latency_ms"]["stages"]["decode"]["p50"]}

    def torch_arm(self, data, workers, epochs=2, batch_size=32, **options):
        """options: torch_peer.py's --decoder and --video-reader, as decoder=, video_reader=."""
        flags = [a for key, value in options.items()
                 for a in (f"--{key.replace('_', '-')}", value)]
        out = run([sys.executable, os.path.join(HERE, "torch_peer.py"), data,
                   "--workers", str(workers), "--epochs", str(epochs),
                   "--batch-size", str(batch_size), *flags])
        return json.loads(out)

    def tjbench_arm(self, jpegs):
        """libjpeg-turbo's tjbench on each JPEG, one after the other on one core: seconds per
        full-size decode. -quiet prints one table row per pixel format (here only RGB): image
        width and height in its 5th and 6th columns, decompression Mpixels/s (width x height x
        decodes / seconds) in its last."""
        seconds = []
        for path in jpegs:
            (row,) = [line.split() for line in run(["tjbench", path, *TJBENCH]).splitlines()
                      if re.match(r"RGB\s+\(", line)]
            seconds.append(int(row[4]) * int(row[5]) / (float(row[-1]) * 1e6))
        return {"seconds_per_image": seconds}

    def video_decode_arm(self, data):
        out = run([os.path.join(self.args.build, "bench", "mmprof_video_bench"), data, "8",
                   "224", "1"])
        return json.loads(out.strip().splitlines()[-1])

    def ffmpeg_arm(self, data):
        frames, seconds = 0, 0.0
        for name in sorted(os.listdir(data)):
            if not name.endswith(".mp4"):
                continue
            err = subprocess.run(["ffmpeg", "-hide_banner", "-nostats", "-benchmark", "-threads",
                                  "1", "-i", os.path.join(data, name), "-f", "null", "-"],
                                 check=True, capture_output=True, text=True).stderr
            frames += int(re.findall(r"frame=\s*(\d+)", err)[-1])
            times = re.search(r"bench: utime=([\d.]+)s stime=([\d.]+)s", err)
            seconds += float(times.group(1)) + float(times.group(2))
        return {"frames_decoded": frames, "cpu_seconds": seconds,
                "frames_per_cpu_s": frames / seconds}

    def rounds(self, arms, self_warming=()):
        """arms: {name: callable}. Warm-up (but of the arms in self_warming, which warm up inside
        each run), then REPS shuffled rounds; per-arm results by round."""
        for name, fn in arms.items():
            if name not in self_warming:
                fn()
        results = {name: [] for name in arms}
        for r in range(self.args.reps):
            order = list(arms)
            self.rng.shuffle(order)
            for name in order:
                results[name].append(arms[name]())
            print(f"  round {r + 1}/{self.args.reps}: {', '.join(order)}", file=sys.stderr)
        return results


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def ratio(results, num, den, key="samples_per_s"):
    """num's figure over den's, per round; den a list of arms: over the best (largest) of them
    in that round."""
    dens = den if isinstance(den, list) else [den]
    return spread([a[key] / max(results[d][r][key] for d in dens)
                   for r, a in enumerate(results[num])])


def versus_peers(res, peers, workers):
    """Ratios of mmprof's processes to the DataLoader peers at equal workers, per round: to the
    best of them ("best torch") and to each; and which peer was the best in each round."""
    ratios, best = {}, {}
    for w in workers:
        arms = [f"torch {p} w{w}" for p in peers]
        mmprof = f"mmprof process w{w}"
        ratios[f"mmprof/best torch w{w}"] = ratio(res, mmprof, arms)
        ratios |= {f"mmprof/{arm}": ratio(res, mmprof, arm) for arm in arms}
        best[f"w{w}"] = [max(arms, key=lambda a: res[a][r]["samples_per_s"])
                         for r in range(len(res[mmprof]))]
    return ratios, best


def image_section(b, data):
    top = max(IMAGE_WORKERS)
    names = sorted(os.listdir(data))
    jpegs = [os.path.join(data, n) for n in names if n.lower().endswith((".jpg", ".jpeg"))]
    arms = {"tjbench": lambda: b.tjbench_arm(jpegs)}
    # Two epochs, as the peers: the first batch is the warm-up step, the rest are timed.
    images = sum(n.lower().endswith((".jpg", ".jpeg", ".png")) for n in names)
    steps = max(2, 2 * images // 32 - 1)
    for w in IMAGE_WORKERS:
        for decoder in DECODERS:
            arms[f"torch {decoder} w{w}"] = lambda w=w, d=decoder: b.torch_arm(data, w, decoder=d)
        arms[f"mmprof process w{w}"] = lambda w=w: b.mmprof_arm(data, w, steps=steps)
    for w in (1, 2):
        arms[f"mmprof thread w{w}"] = lambda w=w: b.mmprof_arm(data, w, "thread", steps=steps)
    res = b.rounds(arms, self_warming=("tjbench",))
    summary = {name: {"samples_per_s": spread([r["samples_per_s"] for r in runs]),
                      "time_to_first_batch_ms": spread([r["time_to_first_batch_ms"]
                                                        for r in runs]),
                      "worker_pss_peak_kb": spread([max(r["worker_pss_peak_kb"] or [None],
                                                        key=lambda v: v or 0) for r in runs])}
               for name, runs in res.items() if name != "tjbench"}
    ratios, best = versus_peers(res, DECODERS, IMAGE_WORKERS)
    mmprof_top = [r["samples_per_s"] for r in res[f"mmprof process w{top}"]]
    # The independent limit: every JPEG of the set fully decoded by libjpeg-turbo on one core
    # (tjbench, warm caches, no read, resize or IPC), on `top` cores at once, in images/s:
    # top x the JPEGs / (the sum over the files of seconds per decode); per round, and from the
    # per-file medians over the rounds.
    limit = [top * len(jpegs) / sum(r["seconds_per_image"]) for r in res["tjbench"]]
    per_file = [statistics.median(s) for s in zip(*(r["seconds_per_image"]
                                                    for r in res["tjbench"]))]
    ratios[f"mmprof w{top} / decode limit"] = spread([m / lim for m, lim in
                                                      zip(mmprof_top, limit)])
    # Scaling efficiency, not a hardware limit: the rate with `top` worker processes over `top`
    # times the 0-worker rate (mmprof's whole path on one core); what the processes cost.
    one_core = [r["samples_per_s"] for r in res["mmprof process w0"]]
    ratios[f"scaling efficiency w{top}"] = spread([m / (top * c) for m, c in
                                                   zip(mmprof_top, one_core)])
    ratios[f"worker PSS mmprof/torch pil w{top}"] = spread(
        [max(m["worker_pss_peak_kb"]) / max(t["worker_pss_peak_kb"])
         for m, t in zip(res[f"mmprof process w{top}"], res[f"torch pil w{top}"])
         if m["worker_pss_peak_kb"] and all(m["worker_pss_peak_kb"]) and t["worker_pss_peak_kb"]])
    # Time to first batch against one batch's work on one core (worker start-up included).
    ratios[f"ttfb w{top} / one batch on one core"] = spread(
        [r["time_to_first_batch_ms"] / (32 / c * 1e3)
         for r, c in zip(res[f"mmprof process w{top}"], one_core)])
    return {"arms": summary, "ratios": ratios, "best_peer": best,
            "decode_limit": {"samples_per_s": top * len(jpegs) / sum(per_file),
                             "per_round_samples_per_s": spread(limit), "cores": top,
                             "jpegs": len(jpegs),
                             "pngs_excluded": sum(n.lower().endswith(".png") for n in names),
                             "tjbench_ms_per_image_p50": statistics.median(per_file) * 1e3},
            "scaling_reference_samples_per_s": spread([top * c for c in one_core]),
            "cores": os.cpu_count(), "raw": res}


def video_section(b, data):
    arms = {"mmprof decode": lambda: b.video_decode_arm(data),
            "ffmpeg -threads 1": lambda: b.ffmpeg_arm(data)}
    for w in VIDEO_WORKERS:
        for reader in VIDEO_READERS:
            arms[f"torch {reader} w{w}"] = lambda w=w, r=reader: b.torch_arm(
                data, w, epochs=2, batch_size=4, video_reader=r)
        arms[f"mmprof process w{w}"] = lambda w=w: b.mmprof_arm(data, w, steps=12,
                                                                **{"loader.batch_size": 4})
    res = b.rounds(arms)
    decode_keys = ("cpu_seconds", "frames_decoded", "frames_per_cpu_s")
    ratios, best = versus_peers(res, VIDEO_READERS, VIDEO_WORKERS)
    return {"arms": {n: {k: spread([r[k] for r in runs])
                         for k in (decode_keys if n in DECODE_ARMS else ("samples_per_s",))}
                     for n, runs in res.items()},
            # The target's rate: the same clips delivered per CPU second, ffmpeg decoding every
            # frame, mmprof the frames the 8 sampled ones need (the ratio of CPU times).
            "ratios": {"mmprof decode / ffmpeg, clips per CPU second":
                       ratio(res, "ffmpeg -threads 1", "mmprof decode", "cpu_seconds"),
                       "mmprof decode / ffmpeg, frames decoded per CPU second":
                       ratio(res, "mmprof decode", "ffmpeg -threads 1", "frames_per_cpu_s"),
                       **ratios},
            "best_peer": best, "raw": res}


def memory_vs_prefetch(b, data):
    out = {}
    for depth in (1, 2, 4, 8):
        runs = [b.mmprof_arm(data, 2, **{"loader.prefetch_factor": depth})
                for _ in range(b.args.reps)]
        out[depth] = {"worker_pss_peak_kb": spread([max(r["worker_pss_peak_kb"] or [0])
                                                    for r in runs]),
                      "host_peak_mib": spread([r["host_peak_mib"] for r in runs])}
    return out


def cost_vs_size(b):
    out = {}
    for n in (64, 256, 1024):
        data = b.dataset(f"img{n}", "--images", str(n), "--videos", "0",
                         "--png-fraction", "0")
        runs = [b.mmprof_arm(data, 2, steps=max(2, 2 * n // 32 - 1)) for _ in range(b.args.reps)]
        out[n] = spread([1e3 / r["samples_per_s"] for r in runs])
    return out


def help_time(b):
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        run([b.mmprof, "--help"])
        times.append((time.perf_counter() - t0) * 1e3)
    libs = run(["ldd", b.mmprof])
    return {"help_ms": spread(times), "links_libtorch": "libtorch" in libs}


def plots(results, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def save(name, ax_fn, **axis):
        fig, ax = plt.subplots(figsize=(5, 3.2))
        ax_fn(ax)
        ax.set(**axis)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out, name))
        plt.close(fig)

    def throughput(section):
        def draw(ax):
            arms = section["arms"]
            for label, prefix in ([(f"DataLoader, {d}", f"torch {d} w") for d in DECODERS] +
                                  [("mmprof processes", "mmprof process w"),
                                   ("mmprof threads", "mmprof thread w")]):
                ws = [w for w in IMAGE_WORKERS if f"{prefix}{w}" in arms]
                rate = [arms[f"{prefix}{w}"]["samples_per_s"] for w in ws]
                med = [r["median"] for r in rate]
                err = [[m - r["min"] for m, r in zip(med, rate)],
                       [r["max"] - m for m, r in zip(med, rate)]]
                ax.errorbar(ws, med, yerr=err, marker="o", capsize=3, label=label)
            limit = section["decode_limit"]
            ax.axhline(limit["samples_per_s"], ls="--", c="black",
                       label=f"decode limit (tjbench x {limit['cores']} cores)")
            ax.axhline(section["scaling_reference_samples_per_s"]["median"], ls=":", c="grey",
                       label=f"mmprof 1-core rate x {max(IMAGE_WORKERS)} (scaling)")
            ax.set_xticks(list(IMAGE_WORKERS))
        return draw

    for key, name, title in (("images", "throughput-vs-workers.svg",
                              "Images 320x240 to 1920x1080, batch 32"),
                             ("images_uniform", "throughput-vs-workers-uniform.svg",
                              "Images 640x480, batch 32")):
        if key in results:
            save(name, throughput(results[key]), xlabel="workers", ylabel="samples/s",
                 title=title)
    if "memory_vs_prefetch" in results:
        mem = results["memory_vs_prefetch"]
        depths = sorted(mem, key=int)

        def memory(ax):
            x = [int(d) for d in depths]
            ax.plot(x, [mem[d]["worker_pss_peak_kb"]["median"] / 1024 for d in depths],
                    marker="o", label="worker PSS peak")
            ax.plot(x, [mem[d]["host_peak_mib"]["median"] for d in depths], marker="s",
                    label="host peak")

        save("memory-vs-prefetch.svg", memory, xlabel="prefetch_factor", ylabel="MB",
             title="Memory vs prefetch depth (2 workers)")
    if "cost_vs_size" in results:
        cost = results["cost_vs_size"]
        sizes = sorted(cost, key=int)
        save("cost-vs-size.svg",
             lambda ax: ax.plot([int(n) for n in sizes], [cost[n]["median"] for n in sizes],
                                marker="o"),
             xscale="log", xlabel="images in dataset", ylabel="ms per sample (wall, 2 workers)",
             title="Cost per sample vs dataset size")


SECTIONS = (*IMAGE_SETS, *VIDEO_SETS, "memory_vs_prefetch", "cost_vs_size", "startup")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    parser.add_argument("--work", default=os.path.expanduser("~/.cache/mmprof/speed-bench"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "performance"))
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--images", type=int, default=256,
                        help="images of the long-tailed set (section images)")
    parser.add_argument("--uniform-images", type=int, default=500,
                        help="images of the 640x480 set (section images_uniform)")
    parser.add_argument("--videos", type=int, default=24, help="clips of each video set")
    parser.add_argument("--only", nargs="+", metavar="SECTION", choices=SECTIONS,
                        help="re-measure these sections only and keep the others of the "
                             "existing results.json (if any): " + ", ".join(SECTIONS))
    args = parser.parse_args()
    b = Bench(args)
    os.makedirs(args.out, exist_ok=True)
    size = {"images": args.images, "images_uniform": args.uniform_images} | dict.fromkeys(
        VIDEO_SETS, args.videos)

    def dataset(section):
        """The section's generated set, made on first use."""
        name, gen_args = (IMAGE_SETS | VIDEO_SETS)[section]
        n = str(size[section])
        counts = (("--images", n, "--videos", "0") if section in IMAGE_SETS else
                  ("--images", "0", "--videos", n, "--video-max-s", "4"))
        return b.dataset(name.format(n=n), *counts, *gen_args)

    results = {}
    if args.only and os.path.exists(os.path.join(args.out, "results.json")):
        with open(os.path.join(args.out, "results.json")) as f:
            results = json.load(f)
    results["machine"] = {"cores": os.cpu_count(), "uname": os.uname().release}
    print(f"{os.cpu_count()} cores; the limits are taken for {max(IMAGE_WORKERS)} workers",
          file=sys.stderr)
    measure = {
        **{s: lambda s=s: image_section(b, dataset(s)) for s in IMAGE_SETS},
        **{s: lambda s=s: video_section(b, dataset(s)) for s in VIDEO_SETS},
        "memory_vs_prefetch": lambda: memory_vs_prefetch(b, dataset("images")),
        "cost_vs_size": lambda: cost_vs_size(b),
        "startup": lambda: help_time(b),
    }
    for section in args.only or SECTIONS:
        print(section, file=sys.stderr)
        results[section] = measure[section]()
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    plots(results, args.out)
    print(json.dumps({k: v["ratios"] if k in IMAGE_SETS or k in VIDEO_SETS else v
                      for k, v in results.items()}, indent=1))


if __name__ == "__main__":
    main()
