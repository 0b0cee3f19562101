#!/usr/bin/env python3
"""FlashAir benchmark for issues 4 and 19, side by side in one run, alternating.

Fetch a folder of JPEG-sized files (1-4 MB) from `ferry card --latency 20`:
`ferry get -r` vs tfatool's `flashair-util -S all` (its sync) on the same card.
The card allows 2 connections: tfatool keeps its command.cgi session open while
it downloads on a second connection, so it cannot run against a 1-connection card.
Ferry uses one connection per card regardless (its default).

Then the rate case (issue 19): the same kind of folder from a card with
`--max-connections 1 --latency 20 --rate R` for `ferry get -r` and `ferry sync`
(tfatool gets `--max-connections 2`, which it needs). Besides each tool's share of
the card's rate it prints the ceiling any client without pipelining can reach on
that card: every file costs its bytes at the rate plus the card's latency before
its answer (libcurl has no HTTP/1.1 pipelining, and a one-connection card cannot
hide the latency behind a second connection). What is left beyond that, per
file, is the time between one file's last byte and the next file's request plus
the start of the process and the listing.

Usage: bench/flashair_bench.py [--files 200] [--rounds 3] [--rate-files 200] [--rate 10000000] [--latency 20]
       [--only all|rate|gap] [--ferry PATH]

`--only gap` measures the time between files on the wire instead (tcpdump on lo, root):
from the card's last data packet of one answer to the client's next request, and from
each request to the card's first answer packet.
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
    def __init__(self, ferry, root, extra, connections=2):
        self.proc = subprocess.Popen([ferry, "card", root, "--port", "0", "--max-connections", str(connections)] + extra,
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


def run_ferry_sync(ferry, port, out):
    subprocess.run([ferry, "sync", f"flashair://127.0.0.1:{port}/DCIM", out, "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, names in os.walk(path) for f in names
               if not f.startswith("."))


def rate_case(ferry, root, total, count, rounds, latency_ms, rate, work):
    """Each tool against its own card process (Ferry's with one connection), in
    rotating order; returns {name: median seconds}."""
    tools = ["ferry get -r", "ferry sync", "tfatool flashair-util -S all"]
    times = {name: [] for name in tools}
    flags = ["--latency", str(latency_ms), "--rate", str(rate)]
    for r in range(rounds):
        for name in tools[r % len(tools):] + tools[:r % len(tools)]:
            card = Card(ferry, root, flags, connections=2 if name.startswith("tfatool") else 1)
            out = os.path.join(work, "out-rate")
            shutil.rmtree(out, ignore_errors=True)
            try:
                start = time.perf_counter()
                if name == "ferry get -r":
                    run_ferry(ferry, card.port, out)
                elif name == "ferry sync":
                    run_ferry_sync(ferry, card.port, out)
                else:
                    run_tfatool(card.port, out)
                times[name].append(time.perf_counter() - start)
            finally:
                card.stop()
            got = folder_bytes(out)
            if got != total:
                raise RuntimeError(f"{name} fetched {got} of {total} bytes")
    return {name: median(ts) for name, ts in times.items()}


def gap_case(ferry, root, latency_ms, rate, work, command="get"):
    """The gap the issue asks about, on the wire: `ferry get -r` (or `ferry sync`) from a
    one-connection card with tcpdump on loopback. For each request after the first:
    from the card's last data packet before it to the client's request packet (what the
    client takes between one file's last byte and the next file's request), and from
    the request to the card's first answer packet (the card's latency and its own work).
    Returns (gaps_ms, answers_ms)."""
    card = Card(ferry, root, ["--latency", str(latency_ms), "--rate", str(rate)], connections=1)
    out = os.path.join(work, "out-gap")
    shutil.rmtree(out, ignore_errors=True)
    cap = os.path.join(work, "gap.txt")
    dump = subprocess.Popen(["tcpdump", "-i", "lo", "-n", "-tt", "-l", "-s", "96", "-B", "16384",
                             f"tcp port {card.port}"], stdout=open(cap, "w"), stderr=subprocess.DEVNULL)
    time.sleep(1)
    try:
        if command == "get":
            run_ferry(ferry, card.port, out)
        else:
            run_ferry_sync(ferry, card.port, out)
        time.sleep(0.5)
    finally:
        dump.terminate()
        dump.wait()
        card.stop()
    pkt = re.compile(r"^(\d+\.\d+) IP 127\.0\.0\.1\.(\d+) > 127\.0\.0\.1\.(\d+):.* length (\d+)")
    last_data = None
    waiting_since = None
    gaps, answers = [], []
    with open(cap) as f:
        for line in f:
            m = pkt.match(line)
            if not m or int(m.group(4)) == 0:
                continue
            t, src = float(m.group(1)), int(m.group(2))
            if src == card.port:
                if waiting_since is not None:
                    answers.append((t - waiting_since) * 1000)
                    waiting_since = None
                last_data = t
            else:
                if last_data is not None and waiting_since is None:
                    gaps.append((t - last_data) * 1000)
                waiting_since = t
    return gaps, answers


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
    ap.add_argument("--rate-files", type=int, default=200)
    ap.add_argument("--rate-rounds", type=int, default=1)
    ap.add_argument("--rate", type=int, default=10_000_000)
    ap.add_argument("--latency", type=int, default=20, help="the card's latency in ms (default 20)")
    ap.add_argument("--only", choices=["all", "rate", "gap"], default="all",
                    help="gap: only the time between files on a one-connection card, on the wire (tcpdump)")
    ap.add_argument("--ferry", default=None, help="a ferry binary (default: build this tree)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    ferry = a.ferry or ferry_binary()
    work = tempfile.mkdtemp(prefix="ferry-fa-bench-")
    lines = []
    try:
        if a.only == "gap":
            card3 = os.path.join(work, "card3")
            make_card(card3, a.rate_files, seed=3)
            lines.append(f"### Between files on a one-connection card (`ferry card --max-connections 1 --latency "
                         f"{a.latency} --rate {a.rate}`, {a.rate_files} files of 1-4 MB), on the wire (tcpdump on lo), "
                         f"load average {os.getloadavg()[0]:.1f}\n")
            lines.append("| command | requests | last byte -> next request: median | p90 | max "
                         "| request -> first answer byte: median | p90 |")
            lines.append("|---|---|---|---|---|---|---|")
            for command in ["get", "sync"]:
                gaps, answers = gap_case(ferry, card3, a.latency, a.rate, work, command)
                gaps.sort()
                answers.sort()
                p90 = lambda xs: xs[int(len(xs) * 0.9)] if xs else float("nan")
                lines.append(f"| ferry {command}{' -r' if command == 'get' else ''} | {len(gaps) + 1} | "
                             f"{median(gaps):.2f} ms | {p90(gaps):.2f} ms | {max(gaps):.2f} ms | "
                             f"{median(answers):.2f} ms | {p90(answers):.2f} ms |")
            print("\n".join(lines))
            return
        if a.only == "all":
            card = os.path.join(work, "card")
            total = make_card(card, a.files)
            f, t = compare(ferry, card, total, a.rounds, ["--latency", str(a.latency)], work)
            lines.append(f"### {a.files} files ({total / 1e6:.0f} MB) from `ferry card --max-connections 2 "
                         f"--latency {a.latency}` ({a.rounds} rounds, alternating, median)\n")
            lines.append("| tool | seconds | MB/s |")
            lines.append("|---|---|---|")
            lines.append(f"| ferry get -r | {f:.2f} | {total / f / 1e6:.1f} |")
            lines.append(f"| tfatool flashair-util -S all | {t:.2f} | {total / t / 1e6:.1f} |")
            lines.append(f"\nferry is {t / f:.2f}x faster\n")

        card2 = os.path.join(work, "card2")
        total2 = make_card(card2, a.rate_files, seed=2)
        n = a.rate_files
        body = total2 / a.rate
        ceiling = body + n * a.latency / 1000
        medians = rate_case(ferry, card2, total2, n, a.rate_rounds, a.latency, a.rate, work)
        lines.append(f"### {n} files ({total2 / 1e6:.0f} MB) from `ferry card --latency {a.latency} --rate {a.rate}`,"
                     f" Ferry's card with `--max-connections 1` ({a.rate_rounds} round(s), rotating order, median)\n")
        lines.append(f"The bytes alone take {body:.2f} s at the card's rate; with the card's {a.latency} ms before "
                     f"each of the {n} answers, no client without pipelining can finish before {ceiling:.2f} s "
                     f"= {body / ceiling:.1%} of the card's rate.\n")
        lines.append("| tool | card | seconds | MB/s | share of the card's rate | beyond bytes + latency, per file |")
        lines.append("|---|---|---|---|---|---|")
        for name, secs in medians.items():
            rate = total2 / secs
            conns = "2 connections" if name.startswith("tfatool") else "1 connection"
            lines.append(f"| {name} | {conns} | {secs:.2f} | {rate / 1e6:.2f} | {rate / a.rate:.1%} | "
                         f"{(secs - ceiling) / n * 1000:.1f} ms |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
