#!/usr/bin/env python3
"""`ferry sync` benchmarks for issue 6, side by side in one run.

  1. 500 photos (JPEG-sized, random sizes) from `ferry card --max-connections 1
     --latency 20 --rate 2500000`: `ferry sync` vs tfatool's `flashair-util -S all`
     (its sync down). tfatool keeps one kept-alive connection for command.cgi and
     opens another for every download, so a 1-connection card turns it away (its
     download connection waits for a slot that never frees, then is closed); it
     gets the same card with `--max-connections 2`, which gives it nothing else:
     it downloads one file at a time, and `--rate` paces every response. Both
     fetch into empty folders; the bytes are checked. Reports the ratio and
     Ferry's rate against the card's limit.
  2. A re-sync with nothing new over 5,000 files (5 folders of 1,000): the whole
     `ferry sync` process, timed, against a card at full speed and against the
     card of part 1 (one connection, 20 ms per answer). Nothing may be downloaded.

Usage: bench/sync_bench.py [--photos 500] [--min-mb 0.5] [--max-mb 2] [--rounds 5] [--out bench/RESULTS-sync.md]
Needs: scripts/setup.sh (tfatool in .build/test-venv).
"""
import argparse, json, os, random, re, shutil, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, ferry_binary, median

FLASHAIR_UTIL = os.path.join(ROOT, ".build", "test-venv", "bin", "flashair-util")
RATE = 2_500_000


def make_photos(root, count, min_bytes, max_bytes, seed=6):
    folder = os.path.join(root, "DCIM", "100__TSB")
    os.makedirs(folder)
    rng = random.Random(seed)
    total = 0
    for i in range(count):
        size = rng.randint(min_bytes, max_bytes)
        with open(os.path.join(folder, f"IMG_{i:04d}.JPG"), "wb") as f:
            f.write(b"\xff\xd8\xff\xe0" + os.urandom(size - 4))
        total += size
    return total


def make_many(root, folders=5, per_folder=1000):
    for d in range(folders):
        folder = os.path.join(root, "DCIM", f"{100 + d}CANON")
        os.makedirs(folder)
        for i in range(per_folder):
            with open(os.path.join(folder, f"IMG_{d * per_folder + i:04d}.JPG"), "wb") as f:
                f.write(bytes([i & 0xFF]) * (100 + i % 7))
    return folders * per_folder


class Card:
    def __init__(self, ferry, root, extra):
        self.proc = subprocess.Popen([ferry, "card", root, "--port", "0"] + extra,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not m:
            raise RuntimeError(f"ferry card did not start: {line}")
        self.port = int(m.group(1))
        self.url = f"flashair://127.0.0.1:{self.port}"

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def folder_bytes(path):
    total = 0
    for dirpath, _, names in os.walk(path):
        total += sum(os.path.getsize(os.path.join(dirpath, n)) for n in names if not n.startswith("."))
    return total


def last_summary(stdout):
    lines = [json.loads(l) for l in stdout.splitlines() if l.startswith("{")]
    return [l for l in lines if l.get("type") == "summary"][-1]


def photos(ferry, a, work, card_dir, total, card_flags):
    results = {}
    # Ferry: the card exactly as the issue names it.
    card = Card(ferry, card_dir, ["--max-connections", "1"] + card_flags)
    out = os.path.join(work, "out-ferry")
    shutil.rmtree(out, ignore_errors=True)
    try:
        start = time.perf_counter()
        p = subprocess.run([ferry, "sync", f"{card.url}/DCIM", out, "--json"], capture_output=True, text=True)
        secs = time.perf_counter() - start
    finally:
        card.stop()
    if p.returncode != 0:
        raise RuntimeError(f"ferry sync failed: {p.stderr[-1500:]}")
    summary = last_summary(p.stdout)
    if folder_bytes(out) != total or summary["imported"] != a.photos:
        raise RuntimeError(f"ferry fetched {folder_bytes(out)} of {total} bytes")
    results["ferry"] = (secs, summary["bytesPerSecond"])
    # tfatool: the same card with a second connection (it needs one; see above).
    card = Card(ferry, card_dir, ["--max-connections", "2"] + card_flags)
    out = os.path.join(work, "out-tfatool")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    proxy = f"http://127.0.0.1:{card.port}"
    env = dict(os.environ, HTTP_PROXY=proxy, http_proxy=proxy, NO_PROXY="", no_proxy="")
    try:
        start = time.perf_counter()
        p = subprocess.run([FLASHAIR_UTIL, "-S", "all", "-r", "/DCIM/100__TSB", "-d", out], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        secs = time.perf_counter() - start
    finally:
        card.stop()
    if p.returncode != 0:
        raise RuntimeError(f"flashair-util failed: {p.stderr[-1500:]}")
    if folder_bytes(out) != total:
        raise RuntimeError(f"tfatool fetched {folder_bytes(out)} of {total} bytes")
    results["tfatool"] = (secs, None)
    return results


def resync(ferry, rounds, work):
    card_dir = os.path.join(work, "many")
    count = make_many(card_dir)
    rows = []
    for label, flags in (("full speed", []), ("one connection, 20 ms per answer", ["--max-connections", "1", "--latency", "20"])):
        card = Card(ferry, card_dir, flags)
        out = os.path.join(work, "out-many-" + str(len(rows)))
        try:
            first = subprocess.run([ferry, "sync", f"{card.url}/DCIM", out, "--quiet"], capture_output=True, text=True)
            if first.returncode != 0 or f"imported {count} files" not in first.stdout:
                raise RuntimeError(f"first sync: {first.stdout} {first.stderr[-1500:]}")
            times = []
            for _ in range(rounds):
                start = time.perf_counter()
                p = subprocess.run([ferry, "sync", f"{card.url}/DCIM", out, "--json"], capture_output=True, text=True)
                times.append(time.perf_counter() - start)
                s = last_summary(p.stdout)
                if p.returncode != 0 or s["imported"] != 0 or s["bytes"] != 0 or s["alreadyImported"] != count:
                    raise RuntimeError(f"re-sync downloaded something: {s}")
        finally:
            card.stop()
        rows.append((label, median(times), max(times)))
    return count, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--photos", type=int, default=500)
    ap.add_argument("--min-mb", type=float, default=0.5)
    ap.add_argument("--max-mb", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--skip-photos", action="store_true")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    ferry = ferry_binary()
    work = tempfile.mkdtemp(prefix="ferry-sync-bench-", dir=os.environ.get("BENCH_DIR", "/tmp"))
    lines = []
    try:
        if not a.skip_photos:
            card_dir = os.path.join(work, "card")
            total = make_photos(card_dir, a.photos, int(a.min_mb * 1e6), int(a.max_mb * 1e6))
            res = photos(ferry, a, work, card_dir, total, ["--latency", "20", "--rate", str(RATE)])
            f_secs, f_rate = res["ferry"]
            t_secs, _ = res["tfatool"]
            lines.append(f"### {a.photos} photos ({total / 1e6:.0f} MB, {a.min_mb}-{a.max_mb} MB each) from "
                         f"`ferry card --latency 20 --rate {RATE}` (one run each)\n")
            lines.append("| tool | card | seconds | MB/s (whole run) | share of the card's 2.5 MB/s |")
            lines.append("|---|---|---|---|---|")
            lines.append(f"| ferry sync | `--max-connections 1` | {f_secs:.1f} | {total / f_secs / 1e6:.2f} "
                         f"| {total / f_secs / RATE:.1%} |")
            lines.append(f"| tfatool flashair-util -S all | `--max-connections 2` (fails at 1) | {t_secs:.1f} "
                         f"| {total / t_secs / 1e6:.2f} | {total / t_secs / RATE:.1%} |")
            lines.append(f"\nferry sync vs tfatool: {t_secs / f_secs:.2f}x; ferry's download phase (its own summary): "
                         f"{f_rate / 1e6:.2f} MB/s = {f_rate / RATE:.1%} of the card's limit")
            lines.append(f"\nBoth are held by the card: tfatool already reaches {total / t_secs / RATE:.0%} of "
                         f"the limit, so no client can be more than {RATE * t_secs / total:.2f}x faster here.")
            # The same photos without the rate limit: only the 20 ms per answer and each
            # tool's own cost per file remain.
            res = photos(ferry, a, work, card_dir, total, ["--latency", "20"])
            f2, _ = res["ferry"]
            t2, _ = res["tfatool"]
            lines.append(f"\n### The same {a.photos} photos without `--rate` (`--latency 20` only; one run each)\n")
            lines.append("| tool | seconds | MB/s |")
            lines.append("|---|---|---|")
            lines.append(f"| ferry sync (1 connection) | {f2:.2f} | {total / f2 / 1e6:.0f} |")
            lines.append(f"| tfatool flashair-util -S all | {t2:.2f} | {total / t2 / 1e6:.0f} |")
            lines.append(f"\nferry sync vs tfatool: {t2 / f2:.2f}x")
        count, rows = resync(ferry, a.rounds, work)
        lines.append(f"\n### Re-sync with nothing new over {count:,} files (5 folders of 1,000; whole process, "
                     f"{a.rounds} runs)\n")
        lines.append("| card | median s | max s | downloaded |")
        lines.append("|---|---|---|---|")
        for label, med, worst in rows:
            lines.append(f"| {label} | {med:.3f} | {worst:.3f} | nothing (imported 0, 0 bytes) |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
