#!/usr/bin/env python3
"""CPU of `get -r` of the 500-file FTP tree (bench/ftp_bench.py's tree, from vsftpd on
loopback, 4 at a time), for one or more ferry builds and lftp mirror --parallel=4.

Two measures, as bench/cpu_bench.py:
  1. Instructions (valgrind --tool=callgrind, all threads), total and without glibc's
     memcpy (valgrind counts every iteration of `rep movsb`, so copying the 286 MB into
     the part files' write buffers shows as ~285M instructions that cost far less on the
     real CPU). The same count for the same binary whatever else the machine is doing:
     the measure to compare builds on a shared machine. Ferry and lftp mirror (lftp
     alone: `sync -f` is a separate process that spends its time in the kernel).
  2. user and system CPU seconds of the child and its children (wait4's rusage) and wall
     seconds, medians of alternating runs into a fresh ext4 file system (common.FreshExt4);
     lftp is followed by `sync -f` (common.then_sync). On a loaded machine the wall and
     system times move by 2-3x between runs: compare within one run.

Usage: bench/ftp_cpu_bench.py [--rounds N] [--ferry PATH ...] [--no-callgrind] [--out FILE] [--profiles DIR]
Needs: scripts/setup.sh --bench (vsftpd, lftp), valgrind.
"""
import argparse, os, re, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DURABLE, FreshExt4, Vsftpd, ferry_binary, median, then_sync
from cpu_bench import callgrind
from ftp_bench import lftp, make_tree


def rusage_run(args, cwd):
    start = time.perf_counter()
    p = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise RuntimeError(f"{args[0]} failed: {status}")
    return ru.ru_utime, ru.ru_stime, time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ferry", action="append", help="ferry binaries to compare (default: build this tree)")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--profiles", metavar="DIR", help="keep the callgrind output files there (callgrind_annotate)")
    a = ap.parse_args()
    ferries = a.ferry or [ferry_binary()]
    work = tempfile.mkdtemp(prefix="ferry-ftp-cpu-")
    www = os.path.join(work, "ftp")
    files = make_tree(os.path.join(www, "tree"), 500)
    total = sum(files.values())
    server = Vsftpd(www)
    url = server.url("/tree/")
    tools = {f"ferry {i}" if len(ferries) > 1 else "ferry": [f, "get", "-r", url, "-o", "tree", "-j", "4", "--quiet"]
             for i, f in enumerate(ferries)}
    mirror = lftp(server.url(), "mirror --parallel=4 tree tree")
    tools["lftp mirror --parallel=4" + DURABLE] = then_sync(mirror)
    fs = FreshExt4(size_gb=8 + (len(tools) * a.rounds * total * 13 // 10) // (1 << 30))
    runs = iter(range(1_000_000))

    def fresh(name):
        d = os.path.join(fs.path, f"{name.split()[0]}-{next(runs)}")
        os.makedirs(d)
        subprocess.run(["sync"])
        time.sleep(3)
        return d

    lines = [f"### get -r of a 500-file FTP tree ({total / 1e6:.0f} MB) from vsftpd, 4 at a time\n"]
    try:
        if not a.no_callgrind:
            lines += ["| build | instructions | without memcpy |", "|---|---|---|"]
            counted = {n: c for n, c in tools.items() if n.startswith("ferry")}
            counted["lftp mirror --parallel=4"] = mirror
            for name, cmd in counted.items():
                out = os.path.join(os.path.abspath(a.profiles) if a.profiles else work, f"cg-{next(runs)}.out")
                if a.profiles:
                    os.makedirs(a.profiles, exist_ok=True)
                t, m = callgrind(cmd, fresh(name), out)
                lines.append(f"| {name} | {t / 1e6:.1f}M | {(t - m) / 1e6:.1f}M |")
            lines.append("")
        res = {name: [] for name in tools}
        names = list(tools)
        for r in range(a.rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                res[name].append(rusage_run(tools[name], fresh(name)))
        lines += [f"user and system CPU, wall ({a.rounds} rounds, alternating, medians)\n",
                  "| tool | user s | system s | wall s |", "|---|---|---|---|"]
        for name, rs in res.items():
            lines.append(f"| {name} | {median([x[0] for x in rs]):.3f} | {median([x[1] for x in rs]):.3f} | "
                         f"{median([x[2] for x in rs]):.3f} |")
        lines.append("")
        for i, f in enumerate(ferries):
            lines.append(f"- ferry {i}: `{f}`" if len(ferries) > 1 else f"- ferry: `{f}`")
    finally:
        server.stop()
        fs.close()
        subprocess.run(["rm", "-rf", work])
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "a") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
