#!/usr/bin/env python3
"""SMB benchmarks for issue 30, side by side in one run, alternating, medians.
The server is Samba's smbd on loopback (its own smb.conf, state folders, port
and tdbsam user, as Sources/FerryTestSupport/SambaTestServer.swift starts it).

  1. One 1 GiB file: `ferry get` vs `smbclient -c get` (Samba's own client, the
     same libsmb underneath), also followed by `sync -f` (common.then_sync: Ferry
     flushes each file before it gets its name, smbclient never does).
     Goal: ferry >= 1.0x smbclient (then sync -f).
  2. A tree of 500 files of 4 KiB-4 MiB (ftp_bench.make_tree): `ferry get -r -j 4`
     and `-j 1` vs `smbclient -c 'recurse; prompt; mget *'` (also then sync -f).
     Goal: ferry >= 1.0x smbclient mget then sync -f.
     Every run writes into a new folder of a fresh file system after `sync`
     (common.FreshExt4); every output is checked (file list, sizes, some files
     byte for byte) and a tool that skipped or truncated anything fails the run.

Both tools log in as the same tdbsam user with the same password (ferry through
FERRY_PASSWORD, smbclient through -U USER%PASS on its command line: only here).

Usage: bench/smb_bench.py [--rounds N] [--size-mb N] [--files N] [--only single|tree] [--out FILE] [--ferry PATH]
                          [--link lan|wifi|internet] [--serial-too]
Needs: scripts/setup.sh (samba, smbclient) and --bench (/usr/bin/time).
"""
import argparse, filecmp, math, os, pwd, random, shlex, shutil, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DURABLE, FreshExt4, alternate, ferry_binary, free_port, median, then_sync, wait_port
from ftp_bench import command_lines, make_tree, verify_tree
from link import PROFILES, LinkProcess

PEERS = ["smbclient", "smbpasswd", "/usr/bin/time"]
PASSWORD = "bench-secret"


class Smbd:
    """smbd on 127.0.0.1 (a free port) in the foreground, one share `bench` on
    `root` for the user running the benchmark (tdbsam in its own folder)."""

    def __init__(self, root):
        binary = shutil.which("smbd") or "/usr/sbin/smbd"
        if not os.access(binary, os.X_OK):
            sys.exit("smb_bench: smbd is missing: run scripts/setup.sh")
        self.dir = tempfile.mkdtemp(prefix="bench-smbd-")
        for sub in ("lock", "state", "cache", "private", "pid", "log"):
            os.makedirs(os.path.join(self.dir, sub))
        self.user = pwd.getpwuid(os.geteuid()).pw_name
        self.port = free_port()
        d = self.dir
        self.conf = os.path.join(d, "smb.conf")
        with open(self.conf, "w") as f:
            f.write(f"""[global]
  smb ports = {self.port}
  disable netbios = yes
  interfaces = 127.0.0.1
  bind interfaces only = yes
  server role = standalone server
  lock directory = {d}/lock
  state directory = {d}/state
  cache directory = {d}/cache
  private dir = {d}/private
  pid directory = {d}/pid
  ncalrpc dir = {d}/state/ncalrpc
  log file = {d}/log/smbd.log
  log level = 0
  passdb backend = tdbsam:{d}/private/passdb.tdb
  server min protocol = SMB2_02
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
  rpc start on demand helpers = false
[bench]
  path = {root}
  valid users = {self.user}
  read only = yes
  force user = {self.user}
""")
        subprocess.run(["smbpasswd", "-c", self.conf, "-a", "-s", self.user], input=f"{PASSWORD}\n{PASSWORD}\n",
                       text=True, check=True, capture_output=True)
        self.proc = subprocess.Popen([binary, "--foreground", "--no-process-group", "-s", self.conf],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port)
        self.client_port = self.port

    def through(self, port):
        """Clients connect to `port` (an emulated link in front of smbd, bench/link.py)."""
        self.client_port = port

    def url(self, path):
        return f"smb://{self.user}@127.0.0.1:{self.client_port}/bench{path}"

    def smbclient(self, commands):
        return ["smbclient", "-p", str(self.client_port), "//127.0.0.1/bench", "-U", f"{self.user}%{PASSWORD}",
                "-c", commands]

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def with_password(cmd):
    return ["env", f"FERRY_PASSWORD={PASSWORD}", "NETRC=/dev/null"] + cmd


def single_file(ferry, rounds, size_mb, root, work, server):
    src = os.path.join(root, "big.bin")
    with open(src, "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(size_mb):
            f.write(chunk)
    size = size_mb << 20
    tools = {
        "ferry": with_password([ferry, "get", server.url("/big.bin"), "-o", "big.bin", "--quiet", "--overwrite"]),
        "smbclient -c get": server.smbclient("get big.bin"),
    }
    tools["smbclient -c get" + DURABLE] = then_sync(tools["smbclient -c get"])
    out = os.path.join(work, "out1")
    runs = iter(range(1_000_000))

    def prepare(name):
        d = os.path.join(out, f"{name.split()[0]}-{next(runs)}")
        shutil.rmtree(out, ignore_errors=True)
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
        shutil.rmtree(out, ignore_errors=True)
        os.unlink(src)
    rows = []
    for name, runs_ in res.items():
        secs = median([r[0] for r in runs_])
        rows.append((name, size / secs / 1e6, secs, max(r[1] for r in runs_) / 1024))
    return rows, tools


def tree(ferry, rounds, count, root, server, serial_too=False):
    src = os.path.join(root, "tree")
    files = make_tree(src, count)
    total = sum(files.values())
    by_size = sorted(files, key=files.get)
    samples = sorted({by_size[0], by_size[-1], by_size[len(by_size) // 2]} |
                     set(random.Random(1).sample(sorted(files), min(3, len(files)))))
    tools = {
        "ferry -j 4": with_password([ferry, "get", "-r", server.url("/tree"), "-o", "tree", "-j", "4", "--quiet"]),
        "ferry -j 1": with_password([ferry, "get", "-r", server.url("/tree"), "-o", "tree", "-j", "1", "--quiet"]),
        # smbclient's mget writes into the current folder: a subshell makes `tree` and runs it there.
        "smbclient mget": ["sh", "-c", 'mkdir tree && cd tree && exec "$@"', "sh"]
        + server.smbclient("cd tree; recurse; prompt; mget *"),
    }
    tools["smbclient mget" + DURABLE] = then_sync(tools["smbclient mget"])
    if serial_too:
        tools["ferry -j 4, FERRY_SMB_THREADS=0"] = ["env", "FERRY_SMB_THREADS=0"] + tools["ferry -j 4"]
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
        fs.close()
    rows = [(name, median([r[0] for r in runs_]), max(r[1] for r in runs_) / 1024) for name, runs_ in res.items()]
    return rows, tools, total, fs.describe()


def main():
    ap = argparse.ArgumentParser(description="SMB benchmark: ferry vs smbclient against smbd on loopback")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--only", choices=["single", "tree"], default=None)
    ap.add_argument("--out", default=None, help="append the results as a markdown section to FILE")
    ap.add_argument("--ferry", default=None, help="this ferry binary instead of a release build of the checkout")
    ap.add_argument("--link", choices=sorted(PROFILES), default=None,
                    help="clients reach smbd through this emulated link (bench/link.py) instead of loopback")
    ap.add_argument("--serial-too", action="store_true",
                    help="also run ferry -j 4 with FERRY_SMB_THREADS=0 (every libsmbclient call in turn)")
    a = ap.parse_args()
    missing = [t for t in PEERS if shutil.which(t) is None]
    if missing:
        sys.exit(f"smb_bench: missing {', '.join(missing)}: run scripts/setup.sh --bench")
    ferry = os.path.abspath(a.ferry) if a.ferry else ferry_binary()
    work = tempfile.mkdtemp(prefix="ferry-smb-bench-", dir=os.environ.get("BENCH_DIR", "/tmp"))
    root = os.path.join(work, "share")
    os.makedirs(root)
    server = Smbd(root)
    link = LinkProcess(a.link, [("smb", server.port)]) if a.link else None
    if link:
        server.through(link.__enter__().ports[0])
    where = f"through the emulated `{a.link}` link" if a.link else "on loopback"
    lines = []
    load_before = os.getloadavg()
    try:
        if a.only in (None, "single"):
            rows, tools = single_file(ferry, a.rounds, a.size_mb, root, work, server)
            t = {r[0]: r[1] for r in rows}
            lines.append(f"### One {a.size_mb} MiB file from smbd {where} ({a.rounds} rounds, alternating, median)\n")
            lines.append("| tool | MB/s | seconds | ratio to smbclient | peak RSS MB |")
            lines.append("|---|---|---|---|---|")
            for name, mbps, secs, rss in sorted(rows, key=lambda r: -r[1]):
                lines.append(f"| {name} | {mbps:.0f} | {secs:.3f} | {mbps / t['smbclient -c get']:.2f} | {rss:.1f} |")
            ok = t["ferry"] >= t["smbclient -c get" + DURABLE]
            lines.append(f"\nGoal (ferry >= 1.0x smbclient -c get then sync -f): {'met' if ok else 'NOT met'}"
                         f" (plain smbclient, which flushes nothing: {t['ferry'] / t['smbclient -c get']:.2f}x)\n")
            lines += command_lines(tools)
        if a.only in (None, "tree"):
            rows, tools, total, into = tree(ferry, a.rounds, a.files, root, server, a.serial_too)
            ferry_secs = next(r[1] for r in rows if r[0] == "ferry -j 4")
            lines.append(f"\n### A tree of {a.files} files, 4 KiB-4 MiB ({total / 1e6:.0f} MB), from smbd {where} "
                         f"({a.rounds} rounds, alternating, median)\n")
            lines.append(f"Into {into}; each run in a new folder after `sync`; every run's tree checked.\n")
            lines.append("| tool | seconds | MB/s | speed-up of ferry -j 4 | peak RSS MB |")
            lines.append("|---|---|---|---|---|")
            for name, secs, rss in sorted(rows, key=lambda r: r[1]):
                lines.append(f"| {name} | {secs:.3f} | {total / secs / 1e6:.0f} | {secs / ferry_secs:.2f}x | {rss:.1f} |")
            t = {name: secs for name, secs, _ in rows}
            durable = t["smbclient mget" + DURABLE]
            lines.append(f"\nGoal (ferry -j 4 >= 1.0x smbclient mget then sync -f): "
                         f"{durable / ferry_secs:.2f}x, {'met' if durable >= ferry_secs else 'NOT met'}\n")
            lines += command_lines(tools)
    finally:
        if link:
            link.__exit__(None, None, None)
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    lines.append("\nMachine load (1/5/15-minute averages, 2 cores): %.1f/%.1f/%.1f before, %.1f/%.1f/%.1f after, %s UTC"
                 % (load_before + load_after + (time.strftime("%Y-%m-%d %H:%M", time.gmtime()),)))
    text = "\n".join(lines).strip("\n")
    # The password is on smbclient's command line in the table's commands: never in the results.
    text = text.replace(PASSWORD, "****")
    print(text)
    if a.out:
        cmd = shlex.join(["bench/smb_bench.py"] + sys.argv[1:])
        with open(a.out, "a") as fh:
            fh.write(f"\n## `{cmd}`\n\n{text}\n")


if __name__ == "__main__":
    main()
