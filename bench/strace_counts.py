#!/usr/bin/env python3
"""Syscall counts (strace -f -c, all threads) of ferry builds on the two many-file
workloads: `get URL1 ... URL1000 -j 4` of 1,000 x 64 KiB from nginx (as cpu_bench.py)
and `get -r` of the 500-file FTP tree from vsftpd (as ftp_cpu_bench.py). Prints the
calls of the syscalls that wait for or watch sockets (poll, epoll_*, futex, ...) and
the total, one column per build. Counts, not times: strace slows every call.

Usage: bench/strace_counts.py --ferry OLD --ferry NEW [--files N] [--only http|ftp]
"""
import argparse, os, re, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import FreshExt4, Nginx, Vsftpd
from ftp_bench import make_tree

SHOWN = ["poll", "ppoll", "epoll_wait", "epoll_ctl", "eventfd2", "futex", "sendto", "recvfrom",
         "write", "read", "openat", "linkat"]


def counts(cmd, cwd, out):
    subprocess.run(["strace", "-f", "-c", "-o", out] + cmd, cwd=cwd, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    calls, total = {}, 0
    for line in open(out):
        m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$", line)
        if m:
            calls[m.group(2)] = int(m.group(1))
        m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?total\s*$", line)
        if m:
            total = int(m.group(1))
    return calls, total


def table(title, ferries, command, fs, work):
    results = []
    for i, f in enumerate(ferries):
        d = os.path.join(fs.path, f"{title.split()[0]}-{i}")
        os.makedirs(d)
        results.append(counts(command(f), d, os.path.join(work, f"strace-{title.split()[0]}-{i}.txt")))
    lines = [f"### {title}\n", "| syscall | " + " | ".join(f"ferry {i}" for i in range(len(ferries))) + " |",
             "|---|" + "---|" * len(ferries)]
    for name in SHOWN:
        lines.append(f"| {name} | " + " | ".join(str(c.get(name, 0)) for c, _ in results) + " |")
    lines.append("| all syscalls | " + " | ".join(str(t) for _, t in results) + " |")
    return lines + [""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ferry", action="append", required=True)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--only", choices=["http", "ftp"])
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="strace-counts-")
    fs = FreshExt4()
    lines = []
    try:
        if a.only != "ftp":
            www = os.path.join(work, "www")
            os.makedirs(www)
            for i in range(a.files):
                with open(os.path.join(www, f"f{i:04d}.bin"), "wb") as fh:
                    fh.write(os.urandom(64 << 10))
            nginx = Nginx(www)
            urls = [nginx.url(f"/f{i:04d}.bin") for i in range(a.files)]
            try:
                lines += table(f"http: get of {a.files} x 64 KiB from nginx, -j 4", a.ferry,
                               lambda f: [f, "get"] + urls + ["-o", ".", "-j", "4", "--quiet"], fs, work)
            finally:
                nginx.stop()
        if a.only != "http":
            root = os.path.join(work, "ftp")
            make_tree(os.path.join(root, "tree"), 500)
            server = Vsftpd(root)
            try:
                lines += table("ftp: get -r of the 500-file tree from vsftpd, -j 4", a.ferry,
                               lambda f: [f, "get", "-r", server.url("/tree/"), "-o", "tree", "-j", "4", "--quiet"],
                               fs, work)
            finally:
                server.stop()
        lines += [f"- ferry {i}: `{f}`" for i, f in enumerate(a.ferry)]
    finally:
        fs.close()
        subprocess.run(["rm", "-rf", work])
    print("\n".join(lines))


if __name__ == "__main__":
    main()
