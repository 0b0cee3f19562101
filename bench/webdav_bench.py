#!/usr/bin/env python3
"""WebDAV benchmarks for issue 30, side by side in one run, alternating, medians.

  1. One 1 GiB file from nginx (dav + dav_ext) on loopback: `ferry get dav://...` vs
     `curl` of the same file over plain HTTP (target: ferry at least as fast), and
     `ferry get http://` of it (what WebDAV adds to Ferry's own HTTP download).
  2. get -r of a 500-file tree (5 folders of 100 files of 64 KiB) from the same server:
     `ferry get -r dav://...` vs `rclone copy :webdav:` with rclone's default settings
     (4 transfers, 8 checkers), both listing the tree by PROPFIND (target: ferry 1.5x).

Usage: bench/webdav_bench.py [--rounds N] [--size-mb N] [--out bench/RESULTS-webdav.md]
"""
import argparse, os, shutil, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Nginx, alternate, ferry_binary, median

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


def fresh(work, case):
    def prepare(name):
        d = os.path.join(work, case, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d
    return prepare


def single_file(ferry, rounds, size_mb, work):
    www = os.path.join(work, "www1")
    os.makedirs(www)
    with open(os.path.join(www, "big.bin"), "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(size_mb):
            f.write(chunk)
    server = NginxDAV(www)
    tools = {
        "ferry (dav://)": [ferry, "get", server.dav("/big.bin"), "-o", "big.bin", "--quiet", "--overwrite"],
        "curl (http://)": ["curl", "-s", "-o", "big.bin", server.url("/big.bin")],
        # The same server and file over plain HTTP: what WebDAV itself costs, apart
        # from what the machine's load does to every row.
        "ferry (http://)": [ferry, "get", server.url("/big.bin"), "-o", "big.bin", "--quiet", "--overwrite"],
    }
    try:
        res = alternate(tools, rounds, fresh(work, "out1"))
    finally:
        server.stop()
    rows = []
    for name, runs in res.items():
        secs = median([r[0] for r in runs])
        rows.append((name, (size_mb << 20) / secs / 1e6, secs, max(r[1] for r in runs) / 1024))
    return rows


def tree(ferry, rounds, work, folders=5, per=100, size=64 << 10):
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
    tools = {
        "ferry get -r": [ferry, "get", "-r", server.dav("/tree"), "-o", "tree", "--quiet"],
        "rclone copy": ["rclone", "--config", env_config, "copy", remote, "tree"],
    }

    def check(name, cwd):
        count = sum(len(files) for _, _, files in os.walk(os.path.join(cwd, "tree")))
        if count != folders * per:
            raise RuntimeError(f"{name} fetched {count} files, not {folders * per}")
    try:
        res = alternate(tools, rounds, fresh(work, "out2"), check)
    finally:
        server.stop()
    return [(name, median([r[0] for r in runs]), max(r[1] for r in runs) / 1024) for name, runs in res.items()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    ferry = ferry_binary()
    work = tempfile.mkdtemp(prefix="ferry-bench-dav-", dir=os.environ.get("BENCH_DIR", "/tmp"))
    lines = []
    try:
        rows = single_file(ferry, a.rounds, a.size_mb, work)
        curl = next(r for r in rows if r[0].startswith("curl"))
        load = os.getloadavg()[0]
        lines.append(f"### One {a.size_mb} MiB file from nginx dav on loopback ({a.rounds} rounds, alternating, median)\n")
        lines.append(f"Load average (1 min) after: {load:.1f} (a 2-core machine shared with other builds).\n")
        lines.append("| tool | MB/s | seconds | ratio to curl | peak RSS MB |")
        lines.append("|---|---|---|---|---|")
        for name, mbps, secs, rss in sorted(rows, key=lambda r: -r[1]):
            lines.append(f"| {name} | {mbps:.0f} | {secs:.3f} | {mbps / curl[1]:.2f} | {rss:.1f} |")
        rows = tree(ferry, a.rounds, work)
        ferry_secs = next(r[1] for r in rows if r[0].startswith("ferry"))
        lines.append(f"\n### get -r of 500 files of 64 KiB in 5 folders ({a.rounds} rounds, alternating, median)\n")
        lines.append("| tool | seconds | speed-up of ferry | peak RSS MB |")
        lines.append("|---|---|---|---|")
        for name, secs, rss in sorted(rows, key=lambda r: r[1]):
            lines.append(f"| {name} | {secs:.3f} | {secs / ferry_secs:.2f}x | {rss:.1f} |")
        rclone = next(r[1] for r in rows if r[0].startswith("rclone"))
        lines.append(f"\nferry vs rclone copy (defaults): {rclone / ferry_secs:.2f}x (target 1.5x)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
