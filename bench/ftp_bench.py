#!/usr/bin/env python3
"""FTP benchmarks, side by side in one run, alternating, medians. The server is
vsftpd on loopback (anonymous, read-only, no connection limit: common.Vsftpd).

  1. One 1 GiB file: `ferry get` vs curl, lftp `get`, wget (throughput, seconds,
     ratio to curl, peak RSS). Target: ferry >= curl, ahead of lftp and wget.
  2. A tree of 500 files of 4 KiB-4 MiB (log-uniform sizes from a seeded random,
     5 folders, a fifth of each folder's files one level deeper): `ferry get -r`
     vs `lftp mirror` (its defaults: one file at a time), `lftp mirror
     --parallel=4` and `wget -r`. Targets: ferry >= 1.5x faster than lftp mirror
     and wget -r, no slower than lftp mirror --parallel=4.
     Every run fetches into a new folder of a fresh file system after `sync`
     (common.FreshExt4 says why). After every run the output must hold exactly the
     source's files with the same sizes, and a few of them are compared byte for
     byte; a tool that skipped or truncated anything fails the benchmark.

Usage: bench/ftp_bench.py [--rounds N] [--size-mb N] [--files N] [--only single|tree] [--out FILE]
Needs: scripts/setup.sh --bench (vsftpd, lftp, wget, curl, /usr/bin/time).
"""
import argparse, filecmp, math, os, random, re, shlex, shutil, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DURABLE, FreshExt4, Vsftpd, alternate, ferry_binary, median, then_sync
from link import LinkProcess

PEERS = ["curl", "lftp", "wget", "/usr/bin/time"]


def check_tools():
    missing = [t for t in PEERS if shutil.which(t) is None]
    if missing:
        sys.exit(f"ftp_bench: missing {', '.join(missing)}: run scripts/setup.sh --bench")


def lftp(url, commands):
    # -c runs the commands and exits with their status (a failed get or mirror
    # fails the run). net:max-retries 1: fail at once instead of retrying for
    # minutes; it changes nothing when nothing fails.
    return ["lftp", "-c", f"set net:max-retries 1; open {url}; {commands}"]


def single_file(ferry, rounds, size_mb, work):
    www = os.path.join(work, "ftp1")
    os.makedirs(www)
    src = os.path.join(www, "big.bin")
    with open(src, "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(size_mb):
            f.write(chunk)
    size = size_mb << 20
    server = Vsftpd(www)
    url = server.url("/big.bin")
    tools = {
        "ferry": [ferry, "get", url, "-o", "big.bin", "--quiet", "--overwrite"],
        "curl": ["curl", "-s", "-o", "big.bin", url],
        "lftp": lftp(server.url(), "get big.bin -o big.bin"),
        "wget": ["wget", "-q", "-O", "big.bin", url],
    }

    def prepare(name):
        d = os.path.join(work, "out1", name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        subprocess.run(["sync"])
        return d

    def check(name, cwd):
        got = os.path.join(cwd, "big.bin")
        n = os.path.getsize(got) if os.path.exists(got) else None
        if n != size or not filecmp.cmp(got, src, shallow=False):
            raise RuntimeError(f"{name}: big.bin is not the source file ({n} of {size} bytes)")

    try:
        res = alternate(tools, rounds, prepare, check)
    finally:
        server.stop()
        shutil.rmtree(os.path.join(work, "out1"), ignore_errors=True)
    rows = []
    for name, runs in res.items():
        secs = median([r[0] for r in runs])
        rss = max(r[1] for r in runs)
        rows.append((name, size / secs / 1e6, secs, rss / 1024))
    return rows, tools


def make_tree(root, count, seed=7):
    """count files in root/d0..d4, every fifth file of a folder in dN/nested;
    sizes log-uniform in 4 KiB..4 MiB. Returns {relative path: size}."""
    rng = random.Random(seed)
    lo, hi = math.log(4 << 10), math.log(4 << 20)
    files = {}
    for i in range(count):
        folder = f"d{i % 5}" + ("/nested" if (i // 5) % 5 == 4 else "")
        rel = f"{folder}/f{i:04d}.bin"
        size = int(math.exp(rng.uniform(lo, hi)))
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(os.urandom(size))
        files[rel] = size
    return files


def listing(folder):
    out = {}
    for d, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(d, n)
            out[os.path.relpath(p, folder)] = os.path.getsize(p)
    return out


def verify_tree(name, got_root, src_root, files, samples):
    if not os.path.isdir(got_root):
        raise RuntimeError(f"{name}: no output folder {got_root}")
    got = listing(got_root)
    if got != files:
        missing = sorted(set(files) - set(got))
        extra = sorted(set(got) - set(files))
        wrong = sorted(p for p in set(got) & set(files) if got[p] != files[p])
        raise RuntimeError(
            f"{name}: incomplete tree: {len(got)} files / {sum(got.values())} bytes, expected "
            f"{len(files)} / {sum(files.values())}; missing {missing[:5]}, extra {extra[:5]}, "
            f"wrong size {wrong[:5]}")
    for rel in samples:
        if not filecmp.cmp(os.path.join(got_root, rel), os.path.join(src_root, rel), shallow=False):
            raise RuntimeError(f"{name}: {rel} differs from the source")


def tree(ferry, rounds, count, work, link=None, only=None):
    """link: a bench/link.py profile between vsftpd and every tool (data
    connections included); only: the names of the tools to keep (default all)."""
    www = os.path.join(work, "ftp2")
    os.makedirs(www)
    src = os.path.join(www, "tree")
    files = make_tree(src, count)
    total = sum(files.values())
    by_size = sorted(files, key=files.get)
    samples = sorted({by_size[0], by_size[-1], by_size[len(by_size) // 2]} |
                     set(random.Random(1).sample(sorted(files), min(3, len(files)))))
    # Ferry's default -j, from its help ("transfers at once (default N)").
    help_text = subprocess.run([ferry, "get", "--help"], capture_output=True, text=True).stdout
    m = re.search(r"--jobs.*\(default (\d+)\)", help_text)
    default_jobs = int(m.group(1)) if m else None
    server = Vsftpd(www)
    base, url = server.url(), server.url("/tree/")
    proxy = None
    if link:
        proxy = LinkProcess(link, [("ftp", server.port)])
        base = f"ftp://127.0.0.1:{proxy.ports[0]}"
        url = base + "/tree/"
    # Every tool writes the tree into ./tree of its run folder.
    ferry_j4 = "ferry -j 4" + (" (its default)" if default_jobs == 4 else "")
    tools = {ferry_j4: [ferry, "get", "-r", url, "-o", "tree", "-j", "4", "--quiet"]}
    if default_jobs != 4:
        tools[f"ferry (default -j {default_jobs})"] = [ferry, "get", "-r", url, "-o", "tree", "--quiet"]
    tools.update({
        "lftp mirror": lftp(base, "mirror tree tree"),
        "lftp mirror --parallel=4": lftp(base, "mirror --parallel=4 tree tree"),
        "wget -r": ["wget", "-r", "-nH", "-q", url],
    })
    tools["lftp mirror --parallel=4" + DURABLE] = then_sync(tools["lftp mirror --parallel=4"])
    if only:
        tools = {k: v for k, v in tools.items() if k in only}
    # Room for every run's copy on the fresh file system, nothing is deleted during the run.
    fs = FreshExt4(size_gb=max(8, math.ceil(total * len(tools) * rounds * 1.3 / (1 << 30)) + 1))
    runs = iter(range(1_000_000))

    def prepare(name):
        d = os.path.join(fs.path, f"{name.split()[0]}-{next(runs)}")
        os.makedirs(d)
        subprocess.run(["sync"])
        return d

    def check(name, cwd):
        verify_tree(name, os.path.join(cwd, "tree"), src, files, samples)

    try:
        res = alternate(tools, rounds, prepare, check)
    finally:
        if proxy:
            proxy.stop()
        server.stop()
        fs.close()
    rows = [(name, median([r[0] for r in runs_]), max(r[1] for r in runs_) / 1024) for name, runs_ in res.items()]
    return rows, tools, total, fs.describe()


def command_lines(tools):
    return [f"- {name}: `{shlex.join(['ferry'] + cmd[1:] if cmd[0].endswith('/ferry') else cmd)}`"
            for name, cmd in tools.items()]


def main():
    ap = argparse.ArgumentParser(description="FTP benchmark: ferry vs curl, lftp, wget against vsftpd on loopback")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size-mb", type=int, default=1024, help="size of the single file (default 1024)")
    ap.add_argument("--files", type=int, default=500, help="files in the tree (default 500)")
    ap.add_argument("--only", choices=["single", "tree"], default=None)
    ap.add_argument("--out", default=None, help="append the results as a markdown section to FILE")
    a = ap.parse_args()
    check_tools()
    ferry = ferry_binary()
    work = tempfile.mkdtemp(prefix="ferry-ftp-bench-", dir=os.environ.get("BENCH_DIR", "/tmp"))
    os.chmod(work, 0o755)  # vsftpd's anonymous user reads the files below it
    lines = []
    try:
        if a.only in (None, "single"):
            rows, tools = single_file(ferry, a.rounds, a.size_mb, work)
            curl = next(r for r in rows if r[0] == "curl")
            lines.append(f"### One {a.size_mb} MiB file from vsftpd on loopback "
                         f"({a.rounds} rounds, alternating, median)\n")
            lines.append("| tool | MB/s | seconds | ratio to curl | peak RSS MB |")
            lines.append("|---|---|---|---|---|")
            for name, mbps, secs, rss in sorted(rows, key=lambda r: -r[1]):
                lines.append(f"| {name} | {mbps:.0f} | {secs:.3f} | {mbps / curl[1]:.2f} | {rss:.1f} |")
            f = next(r for r in rows if r[0] == "ferry")
            peers = {r[0]: r[1] for r in rows if r[0] != "ferry"}
            ok = f[1] >= peers["curl"] and f[1] > peers["lftp"] and f[1] > peers["wget"]
            lines.append(f"\nTarget (ferry >= curl, ahead of lftp and wget): {'met' if ok else 'NOT met'}\n")
            lines += command_lines(tools)
        if a.only in (None, "tree"):
            rows, tools, total, where = tree(ferry, a.rounds, a.files, work)
            ferry_secs = next(r[1] for r in rows if r[0].startswith("ferry -j 4"))
            lines.append(f"\n### A tree of {a.files} files, 4 KiB-4 MiB ({total / 1e6:.0f} MB), from vsftpd on loopback "
                         f"({a.rounds} rounds, alternating, median)\n")
            lines.append(f"Into {where}; each run in a new folder after `sync`; every run's tree checked "
                         f"(file list, sizes, some files byte for byte).\n")
            lines.append("| tool | seconds | MB/s | speed-up of ferry -j 4 | peak RSS MB |")
            lines.append("|---|---|---|---|---|")
            for name, secs, rss in sorted(rows, key=lambda r: r[1]):
                lines.append(f"| {name} | {secs:.3f} | {total / secs / 1e6:.0f} | {secs / ferry_secs:.2f}x | {rss:.1f} |")
            t = {name: secs for name, secs, _ in rows}
            ok = (t["lftp mirror"] / ferry_secs >= 1.5 and t["wget -r"] / ferry_secs >= 1.5
                  and ferry_secs <= t["lftp mirror --parallel=4"])
            lines.append(f"\nTargets (>= 1.5x lftp mirror and wget -r, no slower than lftp mirror --parallel=4): "
                         f"{'met' if ok else 'NOT met'}\n")
            durable = t["lftp mirror --parallel=4" + DURABLE]
            lines.append(f"ferry vs lftp mirror --parallel=4 with its files then flushed (see common.then_sync): "
                         f"{durable / ferry_secs:.2f}x\n")
            lines += command_lines(tools)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(lines).strip("\n")
    print(text)
    if a.out:
        cmd = shlex.join(["bench/ftp_bench.py"] + sys.argv[1:])
        with open(a.out, "a") as fh:
            fh.write(f"\n## `{cmd}`\n\n{text}\n")


if __name__ == "__main__":
    main()
