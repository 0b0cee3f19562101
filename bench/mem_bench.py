#!/usr/bin/env python3
"""Memory churn per small file: page faults and CPU of `ferry get` of 1,000 x 64 KiB from
nginx, 4 at a time, builds (or malloc settings) side by side, alternating, medians.

Per run: minor page faults, user and system CPU (wait4's rusage of the child) and wall
time. Page faults count fresh memory touched (heap growth, memory given back to the
kernel and touched again), whatever the machine's load; CPU seconds move with the load.

--tmpfs writes into a tmpfs folder, each run's output deleted afterwards: no disk, no
flush, no page-cache slow-down, so the CPU of the memory work itself shows (a fresh ext4,
as cpu_bench.py, is the default: the real case, with the flushes' noise).

A variant is `NAME=BINARY` or `NAME=BINARY:VAR=VALUE,VAR=VALUE` (environment, e.g.
GLIBC_TUNABLES=glibc.malloc.arena_max=1).

Usage: bench/mem_bench.py [--rounds N] [--files N] [--tmpfs] VARIANT ...
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import FreshExt4, Nginx


def parse(spec):
    name, rest = spec.split("=", 1)
    binary, _, envs = rest.partition(":")
    env = dict(os.environ)
    for kv in filter(None, envs.split(",")):
        k, v = kv.split("=", 1)
        env[k] = v
    return name, binary, env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--tmpfs", action="store_true")
    ap.add_argument("variants", nargs="+")
    a = ap.parse_args()
    variants = [parse(v) for v in a.variants]
    work = tempfile.mkdtemp(prefix="mem-bench-")
    www = os.path.join(work, "www")
    os.makedirs(www)
    for i in range(a.files):
        with open(os.path.join(www, f"f{i:04d}.bin"), "wb") as f:
            f.write(os.urandom(64 << 10))
    nginx = Nginx(www)
    urls = [nginx.url(f"/f{i:04d}.bin") for i in range(a.files)]
    fs, target = None, os.path.join(work, "out")
    if a.tmpfs:
        os.makedirs(target)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1g", "tmpfs", target], check=True)
    else:
        fs = FreshExt4()
        target = fs.path
    res = {v[0]: [] for v in variants}
    load = os.getloadavg()
    try:
        n = 0
        for r in range(a.rounds):
            for name, binary, env in variants[r % len(variants):] + variants[:r % len(variants)]:
                d = os.path.join(target, f"run{n}")
                n += 1
                os.makedirs(d)
                subprocess.run(["sync"])
                time.sleep(1)
                start = time.perf_counter()
                p = subprocess.Popen([binary, "get"] + urls + ["-o", ".", "-j", "4", "--quiet"], cwd=d, env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                _, status, ru = os.wait4(p.pid, 0)
                wall = time.perf_counter() - start
                if status != 0:
                    raise RuntimeError(f"{name} failed: {status}")
                if a.tmpfs:
                    shutil.rmtree(d)
                res[name].append((ru.ru_utime + ru.ru_stime, ru.ru_utime, ru.ru_stime, ru.ru_minflt, wall))
    finally:
        nginx.stop()
        if a.tmpfs:
            subprocess.run(["umount", target])
        if fs:
            fs.close()
        shutil.rmtree(work, ignore_errors=True)
    med = statistics.median
    where = "tmpfs, each run's output deleted" if a.tmpfs else (fs.describe() if fs else target)
    print(f"{a.files} x 64 KiB from nginx, 4 at a time, into {where}; {a.rounds} alternating rounds, medians; "
          f"load average (1 min) {load[0]:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"`python3 bench/mem_bench.py {' '.join(sys.argv[1:])}`\n")
    print("| variant | page faults | max | user+sys CPU s | user s | sys s | wall s |")
    print("|---|---|---|---|---|---|---|")
    for name, rs in res.items():
        print(f"| {name} | {med([x[3] for x in rs]):.0f} | {max(x[3] for x in rs)} | {med([x[0] for x in rs]):.3f} | "
              f"{med([x[1] for x in rs]):.3f} | {med([x[2] for x in rs]):.3f} | {med([x[4] for x in rs]):.3f} |")


if __name__ == "__main__":
    main()
