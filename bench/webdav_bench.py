#!/usr/bin/env python3
"""WebDAV benchmarks for issue 30, side by side in one run, alternating, medians.

  1. One 1 GiB file from nginx (dav + dav_ext) on loopback: `ferry get dav://...` vs
     `curl` of the same file over plain HTTP, and curl followed by `sync -f` (Ferry
     flushes the file before it gets its name; curl never does: the durable row is the
     like-for-like one, as in every benchmark here since 2026-11-30; target: ferry at
     least as fast), and `ferry get http://` of it (what WebDAV adds to Ferry's own
     HTTP download).
  2. get -r of a 500-file tree (5 folders of 100 files of 64 KiB) from the same server:
     `ferry get -r dav://...` vs `rclone copy :webdav:` with rclone's default settings
     (4 transfers, 8 checkers), plain and followed by `sync -f`, both listing the tree by
     PROPFIND (target: ferry 1.5x).

Every run writes into a new folder of a fresh ext4 (FreshExt4 in common.py says why)
after a `sync`, so no run pays for another's writes.

Usage: bench/webdav_bench.py [--rounds N] [--size-mb N] [--ferry BIN ...] [--out FILE]
  (--ferry twice: two builds side by side in the same rounds, e.g. main and a branch)
"""
import argparse, os, shutil, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DURABLE, FreshExt4, Nginx, alternate, ferry_binary, median, then_sync

DAV_EXT = "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so"


class NginxDAV(Nginx):
    """The benchmarks' nginx with WebDAV on `/` (dav_ext for PROPFIND), as the tests'
    NginxDAVServer (Sources/FerryTestSupport/WebDAVTestServers.swift) configures it."""

    def __init__(self, root):
        super().__init__(root, main=f"load_module {DAV_EXT};",
                         extra="client_max_body_size 0; location / { dav_methods PUT DELETE MKCOL COPY MOVE; "
                               "dav_ext_methods PROPFIND OPTIONS; }")

    def dav(self, path):
        return f"dav://127.0.0.1:{self.port}{path}"


def fresh(fs):
    """A new folder of the fresh file system per run, after a `sync`."""
    runs = iter(range(1_000_000))

    def prepare(name):
        d = os.path.join(fs.path, f"{name.split()[0]}-{next(runs)}")
        os.makedirs(d)
        subprocess.run(["sync"])
        return d
    return prepare


def ferries(builds):
    """{row label: binary}: one `ferry` row, or one per build given with --ferry."""
    if len(builds) <= 1:
        return {"ferry": builds[0] if builds else ferry_binary()}
    return {f"ferry[{n}]": b for n, b in enumerate(builds)}


def single_file(builds, rounds, size_mb, work):
    www = os.path.join(work, "www1")
    os.makedirs(www)
    with open(os.path.join(www, "big.bin"), "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(size_mb):
            f.write(chunk)
    server = NginxDAV(www)
    curl = ["curl", "-s", "-o", "big.bin", server.url("/big.bin")]
    tools = {"curl (http://)": curl, "curl (http://)" + DURABLE: then_sync(curl)}
    for label, ferry in ferries(builds).items():
        tools[f"{label} (dav://)"] = [ferry, "get", server.dav("/big.bin"), "-o", "big.bin", "--quiet"]
        # The same server and file over plain HTTP: what WebDAV itself costs, apart
        # from what the machine's load does to every row.
        tools[f"{label} (http://)"] = [ferry, "get", server.url("/big.bin"), "-o", "big.bin", "--quiet"]
    # Every run's file stays until the end (as in every benchmark here): room for all of them.
    fs = FreshExt4(size_gb=max(6, (size_mb * len(tools) * rounds >> 10) + 2))
    try:
        res = alternate(tools, rounds, fresh(fs))
    finally:
        server.stop()
        fs.close()
    rows = []
    for name, runs in res.items():
        secs = median([r[0] for r in runs])
        rows.append((name, (size_mb << 20) / secs / 1e6, secs, max(r[1] for r in runs) / 1024))
    return rows


def tree(builds, rounds, work, folders=5, per=100, size=64 << 10):
    www = os.path.join(work, "www2")
    for d in range(folders):
        os.makedirs(os.path.join(www, "tree", f"d{d}"))
        for i in range(per):
            with open(os.path.join(www, "tree", f"d{d}", f"IMG_{i:04d}.JPG"), "wb") as f:
                f.write(os.urandom(size))
    server = NginxDAV(www)
    env_config = os.path.join(work, "rclone.conf")
    open(env_config, "w").close()
    remote = f":webdav,url='http://127.0.0.1:{server.port}/':tree"
    rclone = ["rclone", "--config", env_config, "copy", remote, "tree"]
    tools = {"rclone copy": rclone, "rclone copy" + DURABLE: then_sync(rclone)}
    for label, ferry in ferries(builds).items():
        tools[f"{label} get -r"] = [ferry, "get", "-r", server.dav("/tree"), "-o", "tree", "--quiet"]

    def check(name, cwd):
        count = sum(len(files) for _, _, files in os.walk(os.path.join(cwd, "tree")))
        if count != folders * per:
            raise RuntimeError(f"{name} fetched {count} files, not {folders * per}")
    fs = FreshExt4()
    try:
        res = alternate(tools, rounds, fresh(fs), check)
    finally:
        server.stop()
        fs.close()
    return [(name, median([r[0] for r in runs]), max(r[1] for r in runs) / 1024) for name, runs in res.items()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--out", default=None)
    ap.add_argument("--ferry", action="append", default=[], help="a ferry binary; twice for two builds side by side")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ferry-bench-dav-", dir=os.environ.get("BENCH_DIR", "/tmp"))
    lines = []
    try:
        before = os.getloadavg()
        rows = single_file(a.ferry, a.rounds, a.size_mb, work)
        curl = next(r for r in rows if r[0] == "curl (http://)" + DURABLE)
        lines.append(f"### One {a.size_mb} MiB file from nginx dav on loopback ({a.rounds} rounds, alternating, median)\n")
        lines.append(f"Load average (1/5/15 min) before: {before[0]:.1f}/{before[1]:.1f}/{before[2]:.1f}, "
                     f"after: {os.getloadavg()[0]:.1f} (2 cores).\n")
        lines.append("| tool | MB/s | seconds | ratio to curl + sync -f | peak RSS MB |")
        lines.append("|---|---|---|---|---|")
        for name, mbps, secs, rss in sorted(rows, key=lambda r: -r[1]):
            lines.append(f"| {name} | {mbps:.0f} | {secs:.3f} | {mbps / curl[1]:.2f} | {rss:.1f} |")
        rows = tree(a.ferry, a.rounds, work)
        rclone = next(r[1] for r in rows if r[0] == "rclone copy" + DURABLE)
        lines.append(f"\n### get -r of 500 files of 64 KiB in 5 folders ({a.rounds} rounds, alternating, median)\n")
        lines.append(f"Load average after: {os.getloadavg()[0]:.1f}.\n")
        lines.append("| tool | seconds | ratio to rclone copy + sync -f | peak RSS MB |")
        lines.append("|---|---|---|---|")
        for name, secs, rss in sorted(rows, key=lambda r: r[1]):
            lines.append(f"| {name} | {secs:.3f} | {rclone / secs:.2f}x | {rss:.1f} |")
        lines.append("\nTargets: the 1 GiB file at least as fast as curl + sync -f (1.00), the tree at least "
                     "1.5x rclone copy (defaults) + sync -f.")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
