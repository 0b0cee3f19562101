#!/usr/bin/env python3
"""ez Share benchmark (issue 31): `ferry sync` from the ez Share emulator at one
connection, 20 ms latency and 10 MB/s, side by side with a Python urllib client
that walks the card's pages and follows its links the way ez Share scripts do
(one request at a time, a new connection per request, as urllib makes them).

The emulator is `ferry card DIR --kind ezshare --max-connections 1 --latency 20
--rate 10000000` with 40 photos of 4-8 MB in DCIM/100CANON (long names, so the
links carry 8.3 aliases). Besides each tool's share of the card's rate it prints
the ceiling of a client without pipelining: the bytes at the rate plus the card's
latency before each answer (every file, and the pages: DCIM/ and 100CANON/).

Usage: bench/ezshare_bench.py [--files 40] [--rounds 3] [--rate 10000000] [--latency 20] [--ferry PATH] [--out FILE]
"""
import argparse, os, random, re, shutil, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ferry_binary, median

URLLIB_CLIENT = r'''
import os, re, sys, urllib.parse, urllib.request
base, out = sys.argv[1], sys.argv[2]
todo = [base + "dir?dir=A:%5CDCIM"]
while todo:
    page = todo.pop()
    html = urllib.request.urlopen(page).read().decode("gb2312")
    for href, name in re.findall(r'<a href="([^"]+)"> ([^<]*)</a>', html):
        if name in (".", ".."): continue
        link = urllib.parse.urljoin(page, href)
        if "/dir?" in link:
            todo.append(link)
            continue
        with urllib.request.urlopen(link) as r, open(os.path.join(out, name), "wb") as f:
            while True:
                chunk = r.read(1 << 20)
                if not chunk: break
                f.write(chunk)
'''


def make_card(root, count, seed=31):
    folder = os.path.join(root, "DCIM", "100CANON")
    os.makedirs(folder)
    rng = random.Random(seed)
    total = 0
    for i in range(count):
        size = rng.randint(4_000_000, 8_000_000)
        with open(os.path.join(folder, f"Holiday photo {i:04d}.jpg"), "wb") as f:
            f.write(b"\xff\xd8\xff\xe0" + os.urandom(size - 4))
        total += size
    return total


class Card:
    def __init__(self, ferry, root, flags):
        self.proc = subprocess.Popen([ferry, "card", root, "--kind", "ezshare", "--port", "0"] + flags,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not m:
            raise RuntimeError(f"ferry card did not start: {line}")
        self.port = int(m.group(1))

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, names in os.walk(path) for f in names
               if not f.startswith("."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rate", type=int, default=10_000_000)
    ap.add_argument("--latency", type=int, default=20)
    ap.add_argument("--ferry", default=None, help="a ferry binary (default: build this tree in release mode)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    ferry = a.ferry or ferry_binary()
    work = tempfile.mkdtemp(prefix="ferry-ez-bench-")
    try:
        root = os.path.join(work, "card")
        total = make_card(root, a.files)
        flags = ["--max-connections", "1", "--latency", str(a.latency), "--rate", str(a.rate)]
        body = total / a.rate
        requests = a.files + 2
        ceiling = body + requests * a.latency / 1000
        tools = ["ferry sync", "python urllib"]
        times = {t: [] for t in tools}
        for r in range(a.rounds):
            for name in tools[r % 2:] + tools[:r % 2]:
                card = Card(ferry, root, flags)
                out = os.path.join(work, "out")
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out)
                try:
                    start = time.perf_counter()
                    if name == "ferry sync":
                        subprocess.run([ferry, "sync", f"ezshare://127.0.0.1:{card.port}/DCIM", out, "--quiet"],
                                       check=True, stdout=subprocess.DEVNULL)
                    else:
                        subprocess.run([sys.executable, "-c", URLLIB_CLIENT, f"http://127.0.0.1:{card.port}/", out],
                                       check=True)
                    times[name].append(time.perf_counter() - start)
                finally:
                    card.stop()
                got = folder_bytes(out)
                if got != total:
                    raise RuntimeError(f"{name} fetched {got} of {total} bytes")
        lines = [
            f"### {a.files} photos ({total / 1e6:.0f} MB, 4-8 MB each) from `ferry card --kind ezshare "
            f"--max-connections 1 --latency {a.latency} --rate {a.rate}` ({a.rounds} rounds, alternating, median; "
            f"load average {os.getloadavg()[0]:.1f})\n",
            f"The bytes alone take {body:.2f} s at the card's rate; with {a.latency} ms before each of the "
            f"{requests} answers (two pages, {a.files} files) no client without pipelining finishes before "
            f"{ceiling:.2f} s = {body / ceiling:.1%} of the card's rate.\n",
            "| tool | seconds | MB/s | share of the card's rate | share of the ceiling |",
            "|---|---|---|---|---|",
        ]
        for name in tools:
            secs = median(times[name])
            lines.append(f"| {name} | {secs:.2f} | {total / secs / 1e6:.2f} | {body / secs:.1%} | {ceiling / secs:.1%} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
