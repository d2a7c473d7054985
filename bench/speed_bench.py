#!/usr/bin/python3
"""Speed benchmark: mmprof's loader against PyTorch's DataLoader and the hardware limit.

Protocol (bench/README.md, "speed_bench"): generated datasets (images only, clips only), the same
output (images 224x224 float32 normalized, clips 8x224x224, batch 32), every arm run once as a
warm-up, then REPS rounds in which all arms of a comparison run back to back in a fresh shuffled
order (seeded); medians and min-max spread per arm, ratios computed per round from arms of the
same round. Writes results.json and SVG plots to --out; docs/performance.md quotes them.
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

    def torch_arm(self, data, workers, epochs=2, batch_size=32):
        out = run([sys.executable, os.path.join(HERE, "torch_peer.py"), data,
                   "--workers", str(workers), "--epochs", str(epochs),
                   "--batch-size", str(batch_size)])
        return json.loads(out)

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

    def rounds(self, arms):
        """arms: {name: callable}. Warm-up, then REPS shuffled rounds; per-arm results by round."""
        for fn in arms.values():
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
    return spread([a[key] / b[key] for a, b in zip(results[num], results[den])])


def image_section(b, data):
    arms = {}
    for w in (0, 1, 2):
        arms[f"torch w{w}"] = lambda w=w: b.torch_arm(data, w)
        arms[f"mmprof process w{w}"] = lambda w=w: b.mmprof_arm(data, w)
    for w in (1, 2):
        arms[f"mmprof thread w{w}"] = lambda w=w: b.mmprof_arm(data, w, "thread")
    res = b.rounds(arms)
    cores = os.cpu_count()
    summary = {name: {"samples_per_s": spread([r["samples_per_s"] for r in runs]),
                      "time_to_first_batch_ms": spread([r["time_to_first_batch_ms"]
                                                        for r in runs]),
                      "worker_pss_peak_kb": spread([max(r["worker_pss_peak_kb"] or [None],
                                                        key=lambda v: v or 0) for r in runs])}
               for name, runs in res.items()}
    ratios = {f"mmprof/torch w{w}": ratio(res, f"mmprof process w{w}", f"torch w{w}")
              for w in (0, 1, 2)}
    # The limit: the single-core rate (0 workers: the whole path on one core) times the cores.
    limit = [r["samples_per_s"] * cores for r in res["mmprof process w0"]]
    ratios["mmprof w2 / limit"] = spread([r["samples_per_s"] / lim for r, lim in
                                          zip(res["mmprof process w2"], limit)])
    ratios["worker PSS mmprof/torch w2"] = spread(
        [max(m["worker_pss_peak_kb"]) / max(t["worker_pss_peak_kb"])
         for m, t in zip(res["mmprof process w2"], res["torch w2"])
         if m["worker_pss_peak_kb"] and all(m["worker_pss_peak_kb"]) and t["worker_pss_peak_kb"]])
    # Time to first batch against one batch's work on one core (worker start-up included).
    one_batch_ms = [32 / r["samples_per_s"] * 1e3 for r in res["mmprof process w0"]]
    ratios["ttfb w2 / one batch on one core"] = spread(
        [r["time_to_first_batch_ms"] / ms for r, ms in zip(res["mmprof process w2"],
                                                          one_batch_ms)])
    return {"arms": summary, "ratios": ratios, "limit_samples_per_s": spread(limit),
            "cores": cores, "raw": res}


def tjbench_check(b, data, mmprof_decode_ms_p50):
    """libjpeg-turbo's own tjbench on the dataset's JPEGs: full-size decode ms per image, to set
    against mmprof's stage timer for the same decode (dct_scaling off)."""
    ms = []
    for name in sorted(os.listdir(data))[:40]:
        if not name.endswith(".jpg"):
            continue
        out = subprocess.run(["tjbench", os.path.join(data, name), "-benchtime", "0.5",
                              "-warmup", "0.2", "-quiet"], capture_output=True, text=True).stdout
        # Quiet mode: one row per pixel format; width, height at 4-5, decompression Mpix/s last.
        rows = [r.split() for r in out.splitlines() if re.match(r"^[A-Z]{3,4}\s+\(", r)]
        if rows:
            mpix = int(rows[0][4]) * int(rows[0][5]) / 1e6
            ms.append(mpix / float(rows[0][-1]) * 1e3)
    return {"tjbench_decode_ms_p50": statistics.median(ms) if ms else None,
            "mmprof_decode_ms_p50": mmprof_decode_ms_p50}


def video_section(b, data):
    arms = {"mmprof decode": lambda: b.video_decode_arm(data),
            "ffmpeg -threads 1": lambda: b.ffmpeg_arm(data)}
    for w in (1, 2):
        arms[f"torch w{w}"] = lambda w=w: b.torch_arm(data, w, epochs=1, batch_size=4)
        arms[f"mmprof process w{w}"] = lambda w=w: b.mmprof_arm(data, w, steps=6,
                                                                **{"loader.batch_size": 4})
    res = b.rounds(arms)
    decode_keys = ("cpu_seconds", "frames_decoded", "frames_per_cpu_s")
    return {"arms": {n: {k: spread([r[k] for r in runs])
                         for k in (("samples_per_s",) if "w" in n else decode_keys)}
                     for n, runs in res.items()},
            # The target's rate: the same clips delivered per CPU second, ffmpeg decoding every
            # frame, mmprof the frames the 8 sampled ones need (the ratio of CPU times).
            "ratios": {"mmprof decode / ffmpeg, clips per CPU second":
                       ratio(res, "ffmpeg -threads 1", "mmprof decode", "cpu_seconds"),
                       "mmprof decode / ffmpeg, frames decoded per CPU second":
                       ratio(res, "mmprof decode", "ffmpeg -threads 1", "frames_per_cpu_s"),
                       **{f"mmprof/torch w{w}": ratio(res, f"mmprof process w{w}", f"torch w{w}")
                          for w in (1, 2)}},
            "raw": res}


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

    arms = results["images"]["arms"]

    def throughput(ax):
        for label, prefix in (("PyTorch DataLoader", "torch w"),
                              ("mmprof processes", "mmprof process w"),
                              ("mmprof threads", "mmprof thread w")):
            ws = [w for w in (0, 1, 2) if f"{prefix}{w}" in arms]
            rate = [arms[f"{prefix}{w}"]["samples_per_s"] for w in ws]
            med = [r["median"] for r in rate]
            err = [[m - r["min"] for m, r in zip(med, rate)],
                   [r["max"] - m for m, r in zip(med, rate)]]
            ax.errorbar(ws, med, yerr=err, marker="o", capsize=3, label=label)
        ax.axhline(results["images"]["limit_samples_per_s"]["median"], ls="--", c="grey",
                   label="limit (1-core rate x cores)")
        ax.set_xticks([0, 1, 2])

    save("throughput-vs-workers.svg", throughput, xlabel="workers", ylabel="samples/s",
         title="Images 224x224, batch 32")
    mem = results["memory_vs_prefetch"]
    depths = sorted(mem, key=int)

    def memory(ax):
        x = [int(d) for d in depths]
        ax.plot(x, [mem[d]["worker_pss_peak_kb"]["median"] / 1024 for d in depths], marker="o",
                label="worker PSS peak")
        ax.plot(x, [mem[d]["host_peak_mib"]["median"] for d in depths], marker="s",
                label="host peak")

    save("memory-vs-prefetch.svg", memory, xlabel="prefetch_factor", ylabel="MB",
         title="Memory vs prefetch depth (2 workers)")
    cost = results["cost_vs_size"]
    sizes = sorted(cost, key=int)
    save("cost-vs-size.svg",
         lambda ax: ax.plot([int(n) for n in sizes], [cost[n]["median"] for n in sizes], marker="o"),
         xscale="log", xlabel="images in dataset", ylabel="ms per sample (wall, 2 workers)",
         title="Cost per sample vs dataset size")


SECTIONS = ("images", "videos", "memory_vs_prefetch", "cost_vs_size", "startup")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    parser.add_argument("--work", default=os.path.expanduser("~/.cache/mmprof/speed-bench"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "performance"))
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="+", metavar="SECTION", choices=SECTIONS,
                        help="re-measure these sections only and keep the others of the "
                             "existing results.json: " + ", ".join(SECTIONS))
    args = parser.parse_args()
    b = Bench(args)
    os.makedirs(args.out, exist_ok=True)
    images = b.dataset("img256", "--images", "256", "--videos", "0", "--png-fraction", "0")
    videos = b.dataset("vid24", "--images", "0", "--videos", "24", "--video-max-s", "4")
    results = {}
    if args.only:
        with open(os.path.join(args.out, "results.json")) as f:
            results = json.load(f)
    results["machine"] = {"cores": os.cpu_count(), "uname": os.uname().release}
    measure = {
        "images": lambda: {"images": image_section(b, images),
                           "tjbench": tjbench_check(b, images, b.mmprof_arm(
                               images, 0, **{"image.dct_scaling": "false"})["decode_ms_p50"])},
        "videos": lambda: {"videos": video_section(b, videos)},
        "memory_vs_prefetch": lambda: {"memory_vs_prefetch": memory_vs_prefetch(b, images)},
        "cost_vs_size": lambda: {"cost_vs_size": cost_vs_size(b)},
        "startup": lambda: {"startup": help_time(b)},
    }
    for section in args.only or SECTIONS:
        print(section, file=sys.stderr)
        results.update(measure[section]())
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    plots(results, args.out)
    print(json.dumps({k: v for k, v in results.items() if k not in ("images", "videos")} |
                     {"images": results["images"]["ratios"],
                      "videos": results["videos"]["ratios"]}, indent=1))


if __name__ == "__main__":
    main()
