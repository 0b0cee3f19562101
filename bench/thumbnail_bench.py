#!/usr/bin/env python3
"""Thumbnail benchmark for issue 5: server-side thumbnails of 12-megapixel JPEGs
by `ferry serve` (libjpeg-turbo with DCT scaling, then an area-average reduction
to 256 px) against ImageMagick's `convert -thumbnail 256x256` on the same files.

Ferry is timed through its API (GET /api/thumb, a fresh cache each round, one
request at a time); convert once per file, as a person or a script would run it,
and also with `-define jpeg:size=512x512`, which lets ImageMagick use libjpeg's
scaling too. Reports the median per image and the ratio.

Usage: bench/thumbnail_bench.py [--files N] [--rounds N] [--ferry PATH] [--out FILE]
Needs imagemagick (scripts/setup.sh --bench).
"""
import argparse, os, shutil, subprocess, sys, tempfile, time, urllib.request
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ferry_binary, free_port, median, wait_port

# The real ImageMagick, not a wrapper that may come first on PATH.
CONVERT = "/usr/bin/convert" if os.path.exists("/usr/bin/convert") else shutil.which("convert") or "convert"


def make_photos(folder, count):
    os.makedirs(folder)
    paths = []
    for i in range(count):
        path = os.path.join(folder, f"IMG_{i:04d}.JPG")
        # A gradient with grain: compresses like a photo (a few MB at 12 MP).
        subprocess.run([CONVERT, "-size", "4000x3000", f"gradient:#{i * 20 % 256:02x}4080-#f0c0{i * 7 % 256:02x}",
                        "-attenuate", "0.4", "+noise", "Gaussian", "-quality", "90", path], check=True)
        paths.append(path)
    return paths


def time_ferry(ferry, folder, names, work):
    cache = tempfile.mkdtemp(prefix="cache-", dir=work)
    port = free_port()
    proc = subprocess.Popen([ferry, "serve", folder, "--port", str(port), "--cache", cache],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        times = []
        for name in names:
            start = time.perf_counter()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/thumb?path=/{name}") as r:
                data = r.read()
            times.append(time.perf_counter() - start)
            assert data[:2] == b"\xff\xd8", "not a JPEG"
        return times
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(cache, ignore_errors=True)


def time_convert(paths, work, extra):
    times = []
    for path in paths:
        out = os.path.join(work, "thumb.jpg")
        start = time.perf_counter()
        subprocess.run([CONVERT] + extra + [path, "-thumbnail", "256x256", out], check=True)
        times.append(time.perf_counter() - start)
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ferry", help="a built ferry (default: build release)")
    parser.add_argument("--out")
    args = parser.parse_args()
    if not os.path.exists(CONVERT) and not shutil.which(CONVERT):
        sys.exit("thumbnail_bench: needs ImageMagick's convert (scripts/setup.sh --bench)")
    ferry = args.ferry or ferry_binary()
    work = tempfile.mkdtemp(prefix="bench-thumbs-")
    try:
        folder = os.path.join(work, "photos")
        paths = make_photos(folder, args.files)
        names = [os.path.basename(p) for p in paths]
        size = sum(os.path.getsize(p) for p in paths) / len(paths)
        runs = {"ferry serve /api/thumb": [], "convert -thumbnail 256x256": [],
                "convert -define jpeg:size=512x512 -thumbnail 256x256": []}
        for _ in range(args.rounds):
            runs["ferry serve /api/thumb"] += time_ferry(ferry, folder, names, work)
            runs["convert -thumbnail 256x256"] += time_convert(paths, work, [])
            runs["convert -define jpeg:size=512x512 -thumbnail 256x256"] += time_convert(
                paths, work, ["-define", "jpeg:size=512x512"])
        base = median(runs["ferry serve /api/thumb"])
        lines = [f"# Thumbnails of 12-megapixel JPEGs ({args.files} files of {size / 1e6:.1f} MB, "
                 f"{args.rounds} rounds, median per image)", "",
                 "| tool | ms per image | ratio to ferry |", "|---|---|---|"]
        for name, times in runs.items():
            m = median(times)
            lines.append(f"| {name} | {m * 1000:.1f} | {m / base:.1f}x |")
        text = "\n".join(lines) + "\n"
        print(text)
        if args.out:
            with open(args.out, "w") as f:
                f.write(text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
