#!/usr/bin/env python3
"""HTTP benchmarks for issue 2, side by side in one run, alternating, medians.

  1. One 1 GiB file from nginx on loopback: ferry vs curl, wget, aria2c (throughput, peak RSS).
  2. 1,000 files of 64 KiB, 4 at a time: ferry -j 4 vs aria2c -j 4 -i, curl --parallel-max 4, wget -i.
  3. Ten pause/resume cycles during one download through the library API (the test
     HTTPDownloadTests/pauseKeepsBytesAndResumeUsesRange): bytes received twice; and ten
     kill -9 interruptions resumed by re-running the same command: bytes the server
     sent twice (this includes what was still in flight in socket buffers).

  4. get -r of a 1,000-file tree (10 folders of 100 files of 64 KiB) from nginx autoindex
     pages: ferry vs wget -r -np -nH and lftp -c mirror (default, and --parallel=4), all
     reading the same index pages; then a re-run with nothing new: ferry vs wget -r -N.

Usage: bench/http_bench.py [--rounds N] [--size-mb N] [--out bench/RESULTS-http.md]
       bench/http_bench.py --tree-only [--rounds N]   (only case 4, printed)
"""
import argparse, os, shutil, signal, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import COOLDOWN, DURABLE, ROOT, FreshExt4, Nginx, alternate, ferry_binary, median, then_sync
from link import LinkProcess


def single_file(ferry, rounds, size_mb, work, link=None, only=None):
    www = os.path.join(work, "www1")
    os.makedirs(www)
    with open(os.path.join(www, "big.bin"), "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(size_mb):
            f.write(chunk)
    nginx = Nginx(www)
    make_url, proxy = behind(nginx, link)
    url = make_url("/big.bin")
    tools = {
        "ferry": [ferry, "get", url, "-o", "big.bin", "--quiet", "--overwrite"],
        "curl": ["curl", "-s", "-o", "big.bin", url],
        "wget": ["wget", "-q", "-O", "big.bin", url],
        # -x1 (one connection per server) is aria2c's default; named so the table says it.
        "aria2c": ["aria2c", "-q", "-x1", "--allow-overwrite=true", "--auto-file-renaming=false", "-o", "big.bin",
                   url],
    }
    if only:
        tools = {k: v for k, v in tools.items() if k in only}
    def prepare(name):
        d = os.path.join(work, "out1", name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d
    try:
        res = alternate(tools, rounds, prepare)
    finally:
        if proxy:
            proxy.stop()
        nginx.stop()
    size = size_mb << 20
    rows = []
    for name, runs in res.items():
        secs = median([r[0] for r in runs])
        rss = max(r[1] for r in runs)
        rows.append((name, size / secs / 1e6, secs, rss / 1024))
    return rows


def behind(nginx, link):
    """nginx's URL maker, through bench/link.py's profile `link` when given
    (then also the LinkProcess, to stop; else None)."""
    if not link:
        return nginx.url, None
    proxy = LinkProcess(link, [("http", nginx.port)])
    return (lambda path: f"http://127.0.0.1:{proxy.ports[0]}{path}"), proxy


def many_files(ferry, rounds, work, count=1000, size=64 << 10, only=None, builds=None, link=None):
    """link: a bench/link.py profile to put between nginx and every tool."""
    www = os.path.join(work, "www2")
    os.makedirs(www)
    for i in range(count):
        with open(os.path.join(www, f"f{i:04d}.bin"), "wb") as f:
            f.write(os.urandom(size))
    nginx = Nginx(www)
    url_of, proxy = behind(nginx, link)
    urls = [url_of(f"/f{i:04d}.bin") for i in range(count)]
    listfile = os.path.join(work, "urls.txt")
    with open(listfile, "w") as f:
        f.write("\n".join(urls) + "\n")
    curl_args = ["curl", "-s", "--parallel", "--parallel-max", "4"]
    for i, u in enumerate(urls):
        curl_args += ["-o", f"f{i:04d}.bin", u]
    tools = {
        "ferry": [ferry, "get"] + urls + ["-o", ".", "-j", "4", "--quiet"],
        "aria2c": ["aria2c", "-q", "-j", "4", "-i", listfile],
        "curl": curl_args,
        "wget": ["wget", "-q", "-i", listfile],
        "curl" + DURABLE: then_sync(curl_args),
    }
    if only:
        tools = {k: v for k, v in tools.items() if k in only}
    # Builds side by side (--ferry OLD --ferry NEW): each in the same rounds.
    if builds and "ferry" in tools:
        del tools["ferry"]
        for n, b in enumerate(builds):
            tools[f"ferry[{n}]"] = [b, "get"] + urls + ["-o", ".", "-j", "4", "--quiet"]
    # Every run writes into a new folder of a fresh file system, nothing is deleted
    # until the end, and each run starts with no dirty data (`sync`): otherwise
    # one tool's flush pays for the previous tool's writes (FreshExt4 says why).
    fs = FreshExt4()
    runs = iter(range(1_000_000))

    def prepare(name):
        d = os.path.join(fs.path, f"{name}-{next(runs)}")
        os.makedirs(d)
        subprocess.run(["sync"])
        return d
    try:
        res = alternate(tools, rounds, prepare)
    finally:
        if proxy:
            proxy.stop()
        nginx.stop()
        fs.close()
    rows = [(name, median([r[0] for r in runs_]), max(r[1] for r in runs_) / 1024) for name, runs_ in res.items()]
    return rows, fs.describe()


def interrupted(ferry, work, size_mb=64, cycles=10):
    www = os.path.join(work, "www3")
    os.makedirs(www)
    with open(os.path.join(www, "r.bin"), "wb") as f:
        f.write(os.urandom(size_mb << 20))
    nginx = Nginx(www, extra="limit_rate 40m;")
    out = os.path.join(work, "out3")
    os.makedirs(out)
    url = nginx.url("/r.bin")
    try:
        for _ in range(cycles):
            p = subprocess.Popen([ferry, "get", url, "--quiet"], cwd=out)
            time.sleep(0.15)
            p.send_signal(signal.SIGKILL)
            p.wait()
        subprocess.run([ferry, "get", url, "--quiet"], cwd=out, check=True)
        sent = sum(int(l.split("sent=")[1]) for l in nginx.access_log() if "/r.bin" in l)
    finally:
        nginx.stop()
    ok = subprocess.run(["cmp", os.path.join(out, "r.bin"), os.path.join(www, "r.bin")]).returncode == 0
    return sent - (size_mb << 20), ok


def make_tree(www, folders=10, per_folder=100, size=64 << 10):
    for d in range(folders):
        os.makedirs(os.path.join(www, "tree", f"d{d:02d}"))
        for i in range(per_folder):
            with open(os.path.join(www, "tree", f"d{d:02d}", f"f{i:03d}.bin"), "wb") as f:
                f.write(os.urandom(size))
    return folders * per_folder


def count_files(folder):
    """Downloaded files, without the index pages wget keeps."""
    return sum(1 for _, _, names in os.walk(folder) for n in names if n.endswith(".bin"))


def timed_any(cmd, cwd):
    """Like common.timed, but a non-zero exit is a result, not a failure: (secs, exit code)."""
    start = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, p.returncode


def tree(ferry, rounds, work, link=None, only=None):
    """get -r of a 1,000-file autoindex tree, then re-runs with nothing new.
    link: a bench/link.py profile between nginx and every tool; only: the names of
    the first run's tools to keep (default all). Also returns the requests each
    tool's first run made (from nginx's log)."""
    www = os.path.join(work, "www4")
    count = make_tree(www)
    # Relative redirects: an absolute one would name nginx's own port and lead a
    # client around the link.
    nginx = Nginx(www, extra="autoindex on; absolute_redirect off;")
    url_of, proxy = behind(nginx, link)
    url = url_of("/tree/")
    first = {
        "ferry": [ferry, "get", "-r", url, "-o", "tree", "--quiet"],
        "wget -r -np -nH": ["wget", "-q", "-r", "-np", "-nH", url],
        "lftp mirror": ["lftp", "-c", f"mirror {url} tree"],
        "lftp mirror --parallel=4": ["lftp", "-c", f"mirror --parallel=4 {url} tree"],
    }
    # Ferry flushes every file before it gets its final name; these rows add the
    # cheapest flush a peer could do (common.then_sync).
    first["wget -r -np -nH" + DURABLE] = then_sync(first["wget -r -np -nH"])
    first["lftp mirror" + DURABLE] = then_sync(first["lftp mirror"])
    if only:
        first = {k: v for k, v in first.items() if k in only}
    fs = FreshExt4()
    runs = iter(range(1_000_000))
    first_requests, log_at = {}, [0]

    def prepare(name):
        d = os.path.join(fs.path, f"t{next(runs)}")
        os.makedirs(d)
        subprocess.run(["sync"])
        log_at[0] = len(nginx.access_log())
        return d

    def check(name, cwd):
        first_requests[name] = len(nginx.access_log()) - log_at[0]
        got = count_files(cwd)
        if got != count:
            raise RuntimeError(f"{name} saved {got} of {count} files")

    again = {
        "ferry (plain re-run)": [ferry, "get", "-r", url, "-o", "tree", "--quiet"],
        "ferry --skip-existing": [ferry, "get", "-r", url, "-o", "tree", "--quiet", "--skip-existing"],
        "wget -r -N -np -nH": ["wget", "-q", "-r", "-N", "-np", "-nH", url],
    }
    rerun = {name: [] for name in again}
    codes, requests = {}, {}
    try:
        res = alternate(first, rounds, prepare, check)
        # Re-runs: each tool's own complete copy, made once by an untimed first run.
        homes = {}
        for name, cmd in again.items():
            homes[name] = prepare(name)
            tool = cmd[:]
            subprocess.run([c for c in tool if c != "--skip-existing"] if "ferry" in name else
                           ["wget", "-q", "-r", "-N", "-np", "-nH", url], cwd=homes[name], check=True)
        names = list(again)
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                subprocess.run(["sync"])
                time.sleep(min(COOLDOWN, 2))
                before = len(nginx.access_log())
                secs, code = timed_any(again[name], homes[name])
                rerun[name].append(secs)
                codes[name] = code
                requests[name] = len(nginx.access_log()) - before
                if count_files(homes[name]) != count:
                    raise RuntimeError(f"{name} lost files on a re-run")
    finally:
        if proxy:
            proxy.stop()
        nginx.stop()
        fs.close()
    rows = [(name, median([r[0] for r in runs_]), max(r[1] for r in runs_) / 1024) for name, runs_ in res.items()]
    rerows = [(name, median(t), codes[name], requests[name]) for name, t in rerun.items()]
    return rows, rerows, fs.describe(), first_requests


def tree_lines(ferry, rounds, work):
    rows, rerows, where, _ = tree(ferry, rounds, work)
    lines = [f"### get -r of 1,000 files (10 folders x 100 x 64 KiB) from nginx autoindex pages "
             f"({rounds} rounds, alternating, median)\n",
             f"Into {where}; each run in a new folder after `sync`. Every tool reads the same index pages.\n",
             "| tool | seconds | speed-up of ferry | peak RSS MB |", "|---|---|---|---|"]
    ferry_secs = next(r[1] for r in rows if r[0] == "ferry")
    for name, secs, rss in sorted(rows, key=lambda r: r[1]):
        lines.append(f"| {name} | {secs:.3f} | {secs / ferry_secs:.2f}x | {rss:.1f} |")
    best = min(r[1] for r in rows if r[0] != "ferry" and DURABLE not in r[0])
    lines.append(f"\nferry vs the fastest peer: {best / ferry_secs:.2f}x (target 1.5x)")
    durable = min(r[1] for r in rows if DURABLE in r[0])
    lines.append(f"\nferry vs the fastest peer with its files then flushed: {durable / ferry_secs:.2f}x")
    lines.append(f"\n### Re-run with nothing new ({rounds} rounds, median)\n")
    lines.append("| tool | seconds | exit code | requests to the server |")
    lines.append("|---|---|---|---|")
    for name, secs, code, reqs in sorted(rerows, key=lambda r: r[1]):
        lines.append(f"| {name} | {secs:.3f} | {code} | {reqs} |")
    wget = next(r[1] for r in rerows if r[0].startswith("wget"))
    for name, secs, code, _ in rerows:
        if name.startswith("ferry"):
            lines.append(f"\n{name} vs wget -r -N: {wget / secs:.1f}x (target 10x), exit {code}")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--out", default=None)
    ap.add_argument("--many-only", default=None, metavar="TOOLS",
                    help="only the 1,000-file case, with these tools (comma-separated, e.g. ferry,curl); "
                         "prints the table, for quick iterations")
    ap.add_argument("--tree-only", action="store_true", help="only get -r of the 1,000-file autoindex tree")
    ap.add_argument("--ferry", action="append", metavar="PATH",
                    help="with --many-only: ferry binaries to compare side by side (default: build this tree)")
    a = ap.parse_args()
    # Absolute: every tool runs in its own output folder.
    a.ferry = [os.path.abspath(f) for f in a.ferry] if a.ferry else None
    ferry = a.ferry[0] if a.ferry else ferry_binary()
    work = tempfile.mkdtemp(prefix="ferry-bench-", dir=os.environ.get("BENCH_DIR", "/tmp"))
    if a.tree_only:
        try:
            text = "\n".join(tree_lines(ferry, a.rounds, work))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(text)
        if a.out:
            with open(a.out, "w") as f:
                f.write(text + "\n")
        return
    if a.many_only:
        try:
            load = os.getloadavg()[0]
            rows, where = many_files(ferry, a.rounds, work, only=a.many_only.split(","),
                                     builds=a.ferry if a.ferry and len(a.ferry) > 1 else None)
            print(f"into {where}; load average (1 min) before {load:.1f}, after {os.getloadavg()[0]:.1f}")
            if a.ferry and len(a.ferry) > 1:
                for n, b in enumerate(a.ferry):
                    print(f"ferry[{n}] = {b}")
            for name, secs, rss in sorted(rows, key=lambda r: r[1]):
                print(f"{name:8} {secs:.3f} s  peak RSS {rss:.1f} MB")
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    lines = []
    try:
        rows = single_file(ferry, a.rounds, a.size_mb, work)
        curl = next(r for r in rows if r[0] == "curl")
        lines.append(f"### One {a.size_mb} MiB file from nginx on loopback ({a.rounds} rounds, alternating, median)\n")
        lines.append("| tool | MB/s | seconds | ratio to curl | peak RSS MB |")
        lines.append("|---|---|---|---|---|")
        for name, mbps, secs, rss in sorted(rows, key=lambda r: -r[1]):
            lines.append(f"| {name} | {mbps:.0f} | {secs:.3f} | {mbps / curl[1]:.2f} | {rss:.1f} |")
        rows, where = many_files(ferry, a.rounds, work)
        best_peer = min(r[1] for r in rows if r[0] != "ferry" and DURABLE not in r[0])
        lines.append(f"\n### 1,000 files of 64 KiB, 4 at a time ({a.rounds} rounds, alternating, median)\n")
        lines.append(f"Into {where}; each run in a new folder after `sync`.\n")
        lines.append("| tool | seconds | speed-up of ferry | peak RSS MB |")
        lines.append("|---|---|---|---|")
        ferry_secs = next(r[1] for r in rows if r[0] == "ferry")
        for name, secs, rss in sorted(rows, key=lambda r: r[1]):
            lines.append(f"| {name} | {secs:.3f} | {secs / ferry_secs:.2f}x | {rss:.1f} |")
        lines.append(f"\nferry vs the fastest peer: {best_peer / ferry_secs:.2f}x (target 1.2x)")
        durable = next(r[1] for r in rows if r[0] == "curl" + DURABLE)
        lines.append(f"\nferry vs curl with its files then flushed (`curl{DURABLE}`, see common.then_sync): "
                     f"{durable / ferry_secs:.2f}x")
        test = subprocess.run(["swift", "test", "--filter", "pauseKeepsBytesAndResumeUsesRange"], cwd=ROOT,
                              capture_output=True, text=True)
        figure = next((l for l in test.stdout.splitlines() if l.startswith("bench:")), "bench: test did not run")
        lines.append("\n### Ten pause/resume cycles through the library API\n")
        lines.append(figure.replace("bench: ", ""))
        extra, ok = interrupted(ferry, work)
        lines.append(f"\n### Ten kill -9 interruptions of one 64 MiB download, each resumed by the same command\n")
        lines.append(f"bytes sent twice by the server: {extra} ({extra / (1 << 20):.3f} MiB); final file identical: {ok}")
        lines.append("")
        lines += tree_lines(ferry, a.rounds, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
