#!/usr/bin/env python3
"""Camera benchmark (issue 31): `ferry get -r` of 200 photos from libgphoto2's
Directory Browse camera (`camera:///?port=disk:FOLDER`: a folder libgphoto2
presents as a camera, through the same calls a USB camera gets) side by side with
`gphoto2 --port disk:FOLDER --get-all-files` on the same port, in one run
(alternating order, medians).

Both go through libgphoto2's Directory Browse driver; Ferry also flushes every
file before it gets its name, gphoto2 never flushes, so gphoto2 is also shown
followed by `sync -f .` (its files on the disk). Output goes to a fresh ext4
file system when the script runs as root (common.FreshExt4). Photos are JPEG-headed
random bytes of 1-3 MB in DCIM/100CANON.

Usage: bench/camera_bench.py [--files 200] [--rounds 3] [--ferry PATH] [--out FILE]
"""
import argparse, os, random, shutil, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DURABLE, FreshExt4, alternate, ferry_binary, median, then_sync


def make_camera(root, count, seed=31):
    folder = os.path.join(root, "DCIM", "100CANON")
    os.makedirs(folder)
    rng = random.Random(seed)
    total = 0
    for i in range(count):
        size = rng.randint(1_000_000, 3_000_000)
        with open(os.path.join(folder, f"IMG_{i + 1:04d}.JPG"), "wb") as f:
            f.write(b"\xff\xd8\xff\xe0" + os.urandom(size - 4))
        total += size
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ferry", help="a ferry binary (default: build release)")
    ap.add_argument("--out", help="append the table to this file")
    a = ap.parse_args()
    if shutil.which("gphoto2") is None:
        sys.exit("camera_bench: gphoto2 is not installed (scripts/setup.sh --bench)")
    ferry = a.ferry or ferry_binary()
    source = tempfile.mkdtemp(prefix="bench-camera-")
    total = make_camera(source, a.files)
    port = "disk:" + source
    fs = FreshExt4()
    runs = {}

    def prepare(name):
        d = os.path.join(fs.path, f"{name.replace(' ', '_').replace('+', '')}-{len(runs.setdefault(name, []))}")
        runs[name].append(d)
        os.makedirs(d)
        return d

    def check(name, cwd):
        count = sum(len(files) for _, _, files in os.walk(cwd))
        if count != a.files:
            raise RuntimeError(f"{name}: {count} files in {cwd}, expected {a.files}")

    gphoto = ["gphoto2", "--quiet", "--port", port, "--camera", "Directory Browse", "--get-all-files"]
    tools = {
        "ferry get -r": [ferry, "get", "-r", f"camera:///DCIM?port={port}", "-o", ".", "--quiet"],
        "gphoto2 --get-all-files": gphoto,
        "gphoto2 --get-all-files" + DURABLE: then_sync(gphoto),
    }
    try:
        results = alternate(tools, a.rounds, prepare, check)
    finally:
        fs.close()
        shutil.rmtree(source, ignore_errors=True)
    load = os.getloadavg()[0]
    lines = [
        f"### Camera: {a.files} photos ({total / 1e6:.0f} MB) from the Directory Browse camera, "
        f"{time.strftime('%Y-%m-%d')}",
        "",
        f"`python3 bench/camera_bench.py --files {a.files} --rounds {a.rounds}`; output on {fs.describe()}; "
        f"load {load:.1f}; medians of {a.rounds} alternating rounds.",
        "",
        "| tool | seconds | MB/s | peak RSS MB | vs ferry |",
        "|---|---|---|---|---|",
    ]
    ferry_s = median([s for s, _ in results["ferry get -r"]])
    for name, rs in results.items():
        s = median([x for x, _ in rs])
        rss = median([r for _, r in rs]) / 1024
        lines.append(f"| {name} | {s:.3f} | {total / 1e6 / s:.0f} | {rss:.1f} | {s / ferry_s:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    main()
