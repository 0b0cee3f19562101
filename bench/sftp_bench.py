#!/usr/bin/env python3
"""SFTP benchmarks for issue 18, side by side in one run, alternating, medians.
The server is OpenSSH's sshd on loopback (its own config, host key and port,
key login, internal-sftp), started here.

  1. One 1 GiB file: `ferry get` vs `curl sftp://` (the same libcurl + libssh2),
     OpenSSH's `sftp -b` and `lftp sftp://` `get`. Goals: ferry >= 1.0x curl and
     >= 0.8x OpenSSH sftp.
  2. A tree of 500 files of 4 KiB-4 MiB (ftp_bench.make_tree): `ferry get -r`
     vs `lftp mirror`, `lftp mirror --parallel=4` (also followed by `sync -f`,
     common.then_sync) and `sftp -b` `get -r`. Goal: ferry >= 1.0x lftp mirror
     --parallel=4 then sync -f.
     Every run writes into a new folder of a fresh file system after `sync`
     (common.FreshExt4); every output is checked (file list, sizes, some files
     byte for byte) and a tool that skipped or truncated anything fails the run.

Every tool logs in with the same ed25519 key and checks the host key against
the same known_hosts file (ferry and curl through HOME, ssh through -o options).

Usage: bench/sftp_bench.py [--rounds N] [--size-mb N] [--files N] [--only single|tree] [--out FILE]
                           [--ferry PATH] [--also NAME=PATH ...]
Needs: scripts/setup.sh --bench (openssh-server, lftp, curl, /usr/bin/time).
"""
import argparse, filecmp, math, os, pwd, random, shlex, shutil, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DURABLE, FreshExt4, alternate, ferry_binary, free_port, median, then_sync, wait_port
from ftp_bench import command_lines, make_tree, verify_tree

PEERS = ["curl", "lftp", "sftp", "ssh", "ssh-keygen", "/usr/bin/time"]


class Sshd:
    """sshd on 127.0.0.1 (a free port) in the foreground, key login only, with a
    client key and a known_hosts file for the tools in `home`."""

    def __init__(self):
        binary = shutil.which("sshd") or "/usr/sbin/sshd"
        if not os.access(binary, os.X_OK):
            sys.exit("sftp_bench: sshd is missing: run scripts/setup.sh --bench")
        self.dir = tempfile.mkdtemp(prefix="bench-sshd-")
        self.home = os.path.join(self.dir, "home")
        ssh = os.path.join(self.home, ".ssh")
        os.makedirs(ssh, mode=0o700)
        host = os.path.join(self.dir, "host_ed25519")
        self.key = os.path.join(ssh, "id_ed25519")
        for k in (host, self.key):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", k], check=True)
        shutil.copy(self.key + ".pub", os.path.join(self.dir, "authorized_keys"))
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", exist_ok=True)
        self.user = pwd.getpwuid(os.geteuid()).pw_name
        self.port = free_port()
        with open(os.path.join(self.dir, "sshd_config"), "w") as f:
            f.write(f"""Port {self.port}
ListenAddress 127.0.0.1
HostKey {host}
AuthorizedKeysFile {self.dir}/authorized_keys
PidFile none
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
MaxStartups 64:30:100
MaxSessions 64
Subsystem sftp internal-sftp
""")
        self.known_hosts = os.path.join(ssh, "known_hosts")
        with open(host + ".pub") as f:
            kind, blob = f.read().split()[:2]
        with open(self.known_hosts, "w") as f:
            f.write(f"[127.0.0.1]:{self.port} {kind} {blob}\n")
        self.proc = subprocess.Popen([binary, "-D", "-e", "-f", os.path.join(self.dir, "sshd_config")],
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "sshd.log"), "w"))
        wait_port(self.port)
        self.env = dict(os.environ, HOME=self.home, SSH_AUTH_SOCK="")

    def through(self, port):
        """Points every client at `port` instead (a bench/link.py forward to this
        sshd): the URLs and options name it, and known_hosts accepts the host key
        there too. The server keeps listening on its own port (`server_port`)."""
        self.server_port = getattr(self, "server_port", self.port)
        with open(self.known_hosts) as f:
            first = f.readline()
        with open(self.known_hosts, "a") as f:
            f.write(f"[127.0.0.1]:{port} " + first.split(" ", 1)[1])
        self.port = port

    def url(self, path):
        return f"sftp://{self.user}@127.0.0.1:{self.port}{path}"

    def ssh_options(self):
        return ["-o", f"UserKnownHostsFile={self.known_hosts}", "-o", "IdentitiesOnly=yes", "-i", self.key,
                "-o", "BatchMode=yes", "-P", str(self.port)]

    def sftp(self, batch):
        """OpenSSH's sftp running `batch` (a file of commands)."""
        return ["sftp", "-q", "-b", batch] + self.ssh_options() + [f"{self.user}@127.0.0.1"]

    def lftp(self, commands):
        connect = (f"ssh -a -x -i {self.key} -o UserKnownHostsFile={self.known_hosts} -o IdentitiesOnly=yes "
                   f"-o BatchMode=yes")
        return ["lftp", "-c", f"set net:max-retries 1; set sftp:connect-program '{connect}'; "
                              f"open -u {self.user}, -p {self.port} sftp://127.0.0.1; {commands}"]

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def with_env(env, cmd, transport=None):
    """`cmd` with the server's HOME and no agent; `transport`: FERRY_SSH_TRANSPORT
    for a ferry row of the other SSH transport (`libssh2`, `openssh`)."""
    return ["env", f"HOME={env['HOME']}", "SSH_AUTH_SOCK="] + (
        [f"FERRY_SSH_TRANSPORT={transport}"] if transport else []) + cmd


# The ferry rows besides the default one: each SSH transport by name, so both
# are measured in the same rounds (`--transports`).
TRANSPORTS = ["libssh2", "openssh"]


def single_file(ferry, rounds, size_mb, work, server, transports=()):
    src_dir = os.path.join(work, "one")
    os.makedirs(src_dir)
    src = os.path.join(src_dir, "big.bin")
    with open(src, "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(size_mb):
            f.write(chunk)
    size = size_mb << 20
    batch = os.path.join(work, "get-one.sftp")
    with open(batch, "w") as f:
        f.write(f"get {src} big.bin\n")
    tools = {
        "ferry": with_env(server.env, [ferry, "get", server.url(src), "-o", "big.bin", "--quiet", "--overwrite"]),
        **{f"ferry ({t})": with_env(server.env, [ferry, "get", server.url(src), "-o", "big.bin", "--quiet",
                                                  "--overwrite"], t) for t in transports},
        "curl": with_env(server.env, ["curl", "-s", "--key", server.key, "--pubkey", server.key + ".pub",
                                      "-o", "big.bin", server.url(src)]),
        "sftp -b": server.sftp(batch),
        "lftp": server.lftp(f"get {src} -o big.bin"),
    }
    out = os.path.join(work, "out1")

    def prepare(name):
        d = os.path.join(out, name.split()[0])
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
        shutil.rmtree(out, ignore_errors=True)
    rows = []
    for name, runs in res.items():
        secs = median([r[0] for r in runs])
        rows.append((name, size / secs / 1e6, secs, max(r[1] for r in runs) / 1024))
    return rows, tools


def tree(ferry, rounds, count, work, server, extra=(), transports=()):
    src = os.path.join(work, "tree")
    files = make_tree(src, count)
    total = sum(files.values())
    by_size = sorted(files, key=files.get)
    samples = sorted({by_size[0], by_size[-1], by_size[len(by_size) // 2]} |
                     set(random.Random(1).sample(sorted(files), min(3, len(files)))))
    batch = os.path.join(work, "get-tree.sftp")
    with open(batch, "w") as f:
        f.write(f"get -r {src} tree\n")
    tools = {
        "ferry -j 4": with_env(server.env, [ferry, "get", "-r", server.url(src), "-o", "tree", "-j", "4", "--quiet"]),
        **{f"ferry -j 4 ({name})": with_env(server.env, [path, "get", "-r", server.url(src), "-o", "tree", "-j", "4",
                                                          "--quiet"]) for name, path in extra},
        **{f"ferry -j 4 ({t})": with_env(server.env, [ferry, "get", "-r", server.url(src), "-o", "tree", "-j", "4",
                                                       "--quiet"], t) for t in transports},
        "lftp mirror": server.lftp(f"mirror {src} tree"),
        "lftp mirror --parallel=4": server.lftp(f"mirror --parallel=4 {src} tree"),
        "sftp -b (get -r)": server.sftp(batch),
    }
    tools["lftp mirror --parallel=4" + DURABLE] = then_sync(tools["lftp mirror --parallel=4"])
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
    ap = argparse.ArgumentParser(description="SFTP benchmark: ferry vs curl, OpenSSH sftp, lftp against sshd")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--only", choices=["single", "tree"], default=None)
    ap.add_argument("--out", default=None, help="append the results as a markdown section to FILE")
    ap.add_argument("--ferry", default=None, help="this ferry binary instead of a release build of the checkout")
    ap.add_argument("--also", action="append", default=[], metavar="NAME=PATH",
                    help="another ferry binary in the tree rounds (e.g. an older build), as 'ferry -j 4 (NAME)'")
    ap.add_argument("--transports", default=",".join(TRANSPORTS),
                    help="ferry rows with FERRY_SSH_TRANSPORT set to each of these besides the default row "
                         "(comma-separated; empty for none)")
    a = ap.parse_args()
    transports = [t for t in a.transports.split(",") if t]
    missing = [t for t in PEERS if shutil.which(t) is None]
    if missing:
        sys.exit(f"sftp_bench: missing {', '.join(missing)}: run scripts/setup.sh --bench")
    ferry = os.path.abspath(a.ferry) if a.ferry else ferry_binary()
    extra = [(x.split("=", 1)[0], os.path.abspath(x.split("=", 1)[1])) for x in a.also]
    work = tempfile.mkdtemp(prefix="ferry-sftp-bench-", dir=os.environ.get("BENCH_DIR", "/tmp"))
    server = Sshd()
    lines = []
    load_before = os.getloadavg()
    try:
        if a.only in (None, "single"):
            rows, tools = single_file(ferry, a.rounds, a.size_mb, work, server, transports)
            t = {r[0]: r[1] for r in rows}
            lines.append(f"### One {a.size_mb} MiB file from sshd on loopback ({a.rounds} rounds, alternating, median)\n")
            lines.append("| tool | MB/s | seconds | ratio to curl | ratio to sftp -b | peak RSS MB |")
            lines.append("|---|---|---|---|---|---|")
            for name, mbps, secs, rss in sorted(rows, key=lambda r: -r[1]):
                lines.append(f"| {name} | {mbps:.0f} | {secs:.3f} | {mbps / t['curl']:.2f} | "
                             f"{mbps / t['sftp -b']:.2f} | {rss:.1f} |")
            ok = t["ferry"] >= t["curl"] and t["ferry"] >= 0.8 * t["sftp -b"]
            lines.append(f"\nGoals (ferry >= 1.0x curl and >= 0.8x sftp -b): {'met' if ok else 'NOT met'}\n")
            lines += command_lines(tools)
        if a.only in (None, "tree"):
            rows, tools, total, where = tree(ferry, a.rounds, a.files, work, server, extra, transports)
            ferry_secs = next(r[1] for r in rows if r[0] == "ferry -j 4")
            lines.append(f"\n### A tree of {a.files} files, 4 KiB-4 MiB ({total / 1e6:.0f} MB), from sshd on loopback "
                         f"({a.rounds} rounds, alternating, median)\n")
            lines.append(f"Into {where}; each run in a new folder after `sync`; every run's tree checked.\n")
            lines.append("| tool | seconds | MB/s | speed-up of ferry -j 4 | peak RSS MB |")
            lines.append("|---|---|---|---|---|")
            for name, secs, rss in sorted(rows, key=lambda r: r[1]):
                lines.append(f"| {name} | {secs:.3f} | {total / secs / 1e6:.0f} | {secs / ferry_secs:.2f}x | {rss:.1f} |")
            t = {name: secs for name, secs, _ in rows}
            durable = t["lftp mirror --parallel=4" + DURABLE]
            lines.append(f"\nGoal (ferry -j 4 >= 1.0x lftp mirror --parallel=4 then sync -f): "
                         f"{durable / ferry_secs:.2f}x, {'met' if durable >= ferry_secs else 'NOT met'}\n")
            lines += command_lines(tools)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    lines.append("\nMachine load (1/5/15-minute averages, 2 cores): %.1f/%.1f/%.1f before, %.1f/%.1f/%.1f after, %s UTC"
                 % (load_before + load_after + (time.strftime("%Y-%m-%d %H:%M", time.gmtime()),)))
    text = "\n".join(lines).strip("\n")
    print(text)
    if a.out:
        cmd = shlex.join(["bench/sftp_bench.py"] + sys.argv[1:])
        with open(a.out, "a") as fh:
            fh.write(f"\n## `{cmd}`\n\n{text}\n")


if __name__ == "__main__":
    main()
