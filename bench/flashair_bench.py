#!/usr/bin/env python3
"""FlashAir benchmark for issue 4, side by side in one run, alternating.

Fetch a folder of JPEG-sized files (1-4 MB) from `ferry card --latency 20`:
`ferry get -r` vs tfatool's `flashair-util -S all` (its sync) on the same card.
The card allows 2 connections: tfatool keeps its command.cgi session open while
it downloads on a second connection, so it cannot run against a 1-connection card.
Ferry uses one connection per card regardless (its default). Then the same with `--rate` set, where Ferry's effective rate is
compared with the card's limit.

Usage: bench/flashair_bench.py [--files 200] [--rounds 3] [--rate-files 40] [--rate 10000000]
Needs: scripts/setup.sh (tfatool in .build/test-venv).
"""
import argparse, os, random, re, shutil, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, ferry_binary, median

FLASHAIR_UTIL = os.path.join(ROOT, ".build", "test-venv", "bin", "flashair-util")


def make_card(root, count, seed=1):
    folder = os.path.join(root, "DCIM", "100__TSB")
    os.makedirs(folder)
    rng = random.Random(seed)
    total = 0
    for i in range(count):
        size = rng.randint(1_000_000, 4_000_000)
        with open(os.path.join(folder, f"IMG_{i:04d}.JPG"), "wb") as f:
            f.write(b"\xff\xd8\xff\xe0" + os.urandom(size - 4))
        total += size
    return total


class Card:
    def __init__(self, ferry, root, extra):
        self.proc = subprocess.Popen([ferry, "card", root, "--port", "0", "--max-connections", "2"] + extra,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not m:
            raise RuntimeError(f"ferry card did not start: {line}")
        self.port = int(m.group(1))

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def run_ferry(ferry, port, out):
    subprocess.run([ferry, "get", "-r", f"flashair://127.0.0.1:{port}/DCIM/100__TSB", "-o", out, "--quiet"],
                   check=True)


def run_tfatool(port, out):
    os.makedirs(out, exist_ok=True)
    proxy = f"http://127.0.0.1:{port}"
    env = dict(os.environ, HTTP_PROXY=proxy, http_proxy=proxy, NO_PROXY="", no_proxy="")
    p = subprocess.run([FLASHAIR_UTIL, "-S", "all", "-r", "/DCIM/100__TSB", "-d", out], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"flashair-util failed: {p.stderr[-1500:]}")


def compare(ferry, root, total, rounds, extra, work):
    card = Card(ferry, root, extra)
    times = {"ferry": [], "tfatool": []}
    try:
        for r in range(rounds):
            order = ["ferry", "tfatool"] if r % 2 == 0 else ["tfatool", "ferry"]
            for name in order:
                out = os.path.join(work, f"out-{name}")
                shutil.rmtree(out, ignore_errors=True)
                start = time.perf_counter()
                if name == "ferry":
                    run_ferry(ferry, card.port, out)
                else:
                    run_tfatool(card.port, out)
                times[name].append(time.perf_counter() - start)
                got = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
                if got != total:
                    raise RuntimeError(f"{name} fetched {got} of {total} bytes")
    finally:
        card.stop()
    return median(times["ferry"]), median(times["tfatool"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rate-files", type=int, default=40)
    ap.add_argument("--rate", type=int, default=10_000_000)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    ferry = ferry_binary()
    work = tempfile.mkdtemp(prefix="ferry-fa-bench-")
    lines = []
    try:
        card = os.path.join(work, "card")
        total = make_card(card, a.files)
        f, t = compare(ferry, card, total, a.rounds, ["--latency", "20"], work)
        lines.append(f"### {a.files} files ({total / 1e6:.0f} MB) from `ferry card --max-connections 2 --latency 20`"
                     f" ({a.rounds} rounds, alternating, median)\n")
        lines.append("| tool | seconds | MB/s |")
        lines.append("|---|---|---|")
        lines.append(f"| ferry get -r | {f:.2f} | {total / f / 1e6:.1f} |")
        lines.append(f"| tfatool flashair-util -S all | {t:.2f} | {total / t / 1e6:.1f} |")
        lines.append(f"\nferry is {t / f:.2f}x faster")

        card2 = os.path.join(work, "card2")
        total2 = make_card(card2, a.rate_files, seed=2)
        f, t = compare(ferry, card2, total2, 1, ["--latency", "20", "--rate", str(a.rate)], work)
        lines.append(f"\n### {a.rate_files} files ({total2 / 1e6:.0f} MB) with `--latency 20 --rate {a.rate}`\n")
        lines.append("| tool | seconds | MB/s | share of the card's rate |")
        lines.append("|---|---|---|---|")
        for name, secs in (("ferry get -r", f), ("tfatool flashair-util -S all", t)):
            rate = total2 / secs
            lines.append(f"| {name} | {secs:.2f} | {rate / 1e6:.2f} | {rate / a.rate:.0%} |")
        lines.append(f"\nferry is {t / f:.2f}x faster")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
