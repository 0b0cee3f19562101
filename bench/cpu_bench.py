#!/usr/bin/env python3
"""CPU per small file: 1,000 x 64 KiB from nginx on loopback, 4 at a time, ferry vs curl.

Two measures, both side by side in one run:
  1. Instructions (valgrind --tool=callgrind, all threads): the same count for the same
     binary and inputs whatever else the machine is doing, so it is the one to compare
     across builds on a shared machine. Caveat: valgrind counts every iteration of
     `rep movsb` (glibc's memcpy for large copies) as an instruction, so copying the
     file data into Ferry's write buffer shows as ~65M instructions that cost ~10 ms
     on the real CPU; the table gives the count without memcpy too. Timed code (the
     part file's 2 s checkpoint) also fires under valgrind's 30x slow-down and not in
     real runs.
  2. user + system CPU seconds of the child and its children (wait4's rusage), medians of
     alternating runs; "curl + sync -f" is curl, then syncfs on its output, as
     bench/common.then_sync. Every run writes into a new folder of a fresh ext4 file
     system after a `sync` (common.FreshExt4, as http_bench.py): a flush there pays for
     the run's own files only, not for what other processes left dirty in /tmp.

With --json, ferry runs with `--json` instead of `--quiet` (one result line per file,
progress lines every 0.5 s, a summary; stdout to a file under callgrind, whose progress and
result lines the output counts, and to /dev/null in the timed runs): the cost of the JSON lines.

Usage: bench/cpu_bench.py [--rounds N] [--files N] [--ferry PATH ...] [--no-callgrind] [--json]
       [--out bench/RESULTS-cpu.md]
"""
import argparse, os, re, shutil, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DURABLE, FreshExt4, Nginx, ferry_binary, median, then_sync


def callgrind(args, cwd, out):
    with open(out + ".stdout", "w") as stdout:
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + args, cwd=cwd,
                       stdout=stdout, stderr=subprocess.DEVNULL, check=True)
    text = subprocess.run(["callgrind_annotate", out], capture_output=True, text=True).stdout
    total = int(re.search(r"([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", text).group(1).replace(",", ""))
    memcpy = sum(int(m.group(1).replace(",", "")) for m in re.finditer(r"^\s*([\d,]+) \([ \d.]+%\)\s+\S*memmove-vec-unaligned-erms", text, re.M))
    return total, memcpy


def rusage_run(args, cwd):
    start = time.perf_counter()
    p = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise RuntimeError(f"{args[0]} failed: {status}")
    return ru.ru_utime + ru.ru_stime, ru.ru_utime, time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--ferry", action="append", help="ferry binaries to compare (default: build this tree)")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--json", action="store_true", help="ferry with --json instead of --quiet")
    ap.add_argument("--out")
    a = ap.parse_args()
    ferries = a.ferry or [ferry_binary()]
    work = tempfile.mkdtemp(prefix="cpu-bench-")
    www = os.path.join(work, "www")
    os.makedirs(www)
    for i in range(a.files):
        with open(os.path.join(www, f"f{i:04d}.bin"), "wb") as f:
            f.write(os.urandom(64 << 10))
    nginx = Nginx(www)
    urls = [nginx.url(f"/f{i:04d}.bin") for i in range(a.files)]
    curl = ["curl", "-s", "--parallel", "--parallel-max", "4"]
    for i, u in enumerate(urls):
        curl += ["-o", f"f{i:04d}.bin", u]
    # curl never flushes; its files reach the disk later, on the kernel's flusher
    # threads, whose CPU nobody is charged for. Ferry makes them durable itself
    # (syncfs in the process). "curl + sync -f" charges the peer the same work.
    tools = {"curl": curl, "curl" + DURABLE: then_sync(curl)}
    for n, f in enumerate(ferries):
        tools["ferry" if len(ferries) == 1 else f"ferry[{n}] {f}"] = [f, "get"] + urls + ["-o", ".", "-j", "4", "--json" if a.json else "--quiet"]
    runs = iter(range(1_000_000))
    fs = FreshExt4()

    def fresh():
        d = os.path.join(fs.path, f"out{next(runs)}")
        os.makedirs(d)
        subprocess.run(["sync"])
        return d
    rows = []
    load = os.getloadavg()
    try:
        instr = {}
        json_lines = {}
        if not a.no_callgrind:
            for name, args in tools.items():
                if name.endswith(DURABLE):
                    continue
                out = os.path.join(work, f"cg{next(runs)}")
                instr[name] = callgrind(args, fresh(), out)
                if a.json and name.startswith("ferry"):
                    # Progress lines come every 0.5 s: their number follows the run's length
                    # under valgrind, so the table says how many each run wrote.
                    text = open(out + ".stdout").read()
                    json_lines[name] = (text.count('"type":"progress"'), text.count('"type":"result"'))
        cpu = {name: [] for name in tools}
        names = list(tools)
        for r in range(a.rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                cpu[name].append(rusage_run(tools[name], fresh()))
        for name in tools:
            total, memcpy = instr.get(name, (None, None))
            rows.append((name, total, memcpy, median([c[0] for c in cpu[name]]), median([c[1] for c in cpu[name]]),
                         median([c[2] for c in cpu[name]])))
    finally:
        nginx.stop()
        fs.close()
        shutil.rmtree(work, ignore_errors=True)
    lines = [f"{a.files} x 64 KiB from nginx, 4 at a time; {a.rounds} alternating rounds, medians; "
             f"`python3 bench/cpu_bench.py {' '.join(sys.argv[1:])}`".rstrip(),
             f"Into {fs.describe()}; load average (1 min) {load[0]:.1f} before, {os.getloadavg()[0]:.1f} after.", "",
             "| tool | instructions | without memcpy | user+sys CPU s | user s | wall s |", "|---|---|---|---|---|---|"]
    for name, total, memcpy, cpu_s, user_s, wall in rows:
        t = f"{total / 1e6:.0f}M" if total else "-"
        m = f"{(total - memcpy) / 1e6:.0f}M" if total else "-"
        lines.append(f"| {name} | {t} | {m} | {cpu_s:.3f} | {user_s:.3f} | {wall:.3f} |")
    for name, (progress, results) in json_lines.items():
        lines.append(f"\n{name} under callgrind: {progress} progress lines, {results} result lines")
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n" + time.strftime("## %Y-%m-%d %H:%M\n\n") + text + "\n")


if __name__ == "__main__":
    main()
