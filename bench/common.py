"""Shared helpers for Ferry's side-by-side benchmarks: servers on loopback,
timing with peak RSS, alternating runs and medians."""
import os, random, re, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port}")


def ferry_binary():
    # Statically linked Swift runtime, as README.md installs it (starts ~6 ms sooner).
    subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "ferry"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    path = subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--show-bin-path"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()
    return os.path.join(path, "ferry")


class Nginx:
    def __init__(self, root, extra="", main=""):
        """`extra` goes in the server block, `main` at the top of the config (load_module)."""
        self.dir = tempfile.mkdtemp(prefix="bench-nginx-")
        self.port = free_port()
        self.log = os.path.join(self.dir, "access.log")
        conf = f"""{main}
worker_processes 1; daemon off; master_process off; error_log {self.dir}/error.log; pid {self.dir}/nginx.pid;
events {{ worker_connections 4096; }}
http {{
  log_format b '$request_method $uri status=$status range="$http_range" sent=$body_bytes_sent';
  access_log {self.log} b;
  client_body_temp_path {self.dir}; proxy_temp_path {self.dir}; fastcgi_temp_path {self.dir};
  uwsgi_temp_path {self.dir}; scgi_temp_path {self.dir};
  sendfile on; tcp_nopush on; keepalive_requests 100000;
  server {{ listen 127.0.0.1:{self.port}; root {root}; {extra} }}
}}"""
        with open(os.path.join(self.dir, "nginx.conf"), "w") as f:
            f.write(conf)
        self.proc = subprocess.Popen(["nginx", "-c", os.path.join(self.dir, "nginx.conf"), "-p", self.dir],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def access_log(self):
        with open(self.log) as f:
            return f.read().splitlines()

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Vsftpd:
    """vsftpd on 127.0.0.1 (a free port), anonymous and read-only from `root`, with
    the options of the tests' server (Sources/FerryTestSupport/FTPTestServers.swift)
    minus writing and protocol logging, and no limit on connections (max_clients=0,
    max_per_ip=0) for parallel clients. Runs in its own process group (vsftpd forks
    a process per session); stop() kills that group."""

    def __init__(self, root):
        binary = shutil.which("vsftpd") or os.path.join(ROOT, ".build/ftp-servers/root/usr/sbin/vsftpd")
        if not os.access(binary, os.X_OK):
            raise RuntimeError("vsftpd is missing: run scripts/setup.sh --bench")
        self.dir = tempfile.mkdtemp(prefix="bench-vsftpd-")
        empty = os.path.join(self.dir, "empty")
        os.makedirs(empty)
        # vsftpd serves anonymous sessions as this user and changes into its home first.
        try:
            import pwd
            user = "ftp" if os.access(pwd.getpwnam("ftp").pw_dir, os.X_OK) else "daemon"
        except KeyError:
            user = "daemon"
        # The anonymous user reads the files: the root must not be writable by it
        # (vsftpd refuses such a chroot) and everything must be world-readable
        # (anon_world_readable_only).
        for d, dirs, files in os.walk(root):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)
        self.log = os.path.join(self.dir, "vsftpd.log")
        failure = ""
        for _ in range(3):
            self.port = free_port()
            # Passive ports below the kernel's ephemeral range (32768-60999), where
            # free_port() hands out listening ports; wide enough that a run of many
            # files does not cycle through ports still in TIME_WAIT.
            pasv = random.randint(20000, 29000)
            conf = f"""listen=YES
listen_ipv6=NO
listen_address=127.0.0.1
listen_port={self.port}
background=NO
anonymous_enable=YES
no_anon_password=YES
local_enable=NO
anon_root={root}
ftp_username={user}
write_enable=NO
allow_writeable_chroot=YES
seccomp_sandbox=NO
isolate=NO
isolate_network=NO
secure_chroot_dir={empty}
pasv_enable=YES
pasv_min_port={pasv}
pasv_max_port={pasv + 2000}
xferlog_enable=YES
vsftpd_log_file={self.log}
log_ftp_protocol=NO
dual_log_enable=NO
max_clients=0
max_per_ip=0
idle_session_timeout=120
data_connection_timeout=60
"""
            path = os.path.join(self.dir, "vsftpd.conf")
            with open(path, "w") as f:
                f.write(conf)
            out = open(os.path.join(self.dir, "stdout.log"), "w")
            self.proc = subprocess.Popen([binary, path], stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                         start_new_session=True)
            out.close()
            try:
                wait_port(self.port)
                time.sleep(0.1)
                if self.proc.poll() is None:
                    return
            except RuntimeError:
                pass
            with open(os.path.join(self.dir, "stdout.log")) as f:
                failure = f.read()
            self._kill()
        shutil.rmtree(self.dir, ignore_errors=True)
        raise RuntimeError(f"vsftpd did not start: {failure[-1500:]}")

    def url(self, path=""):
        return f"ftp://127.0.0.1:{self.port}{path}"

    def _kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def stop(self):
        self._kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class FreshExt4:
    """A new, empty ext4 file system on a loop device (needs root and mkfs.ext4),
    for benchmarks that create thousands of files.

    Why: right after thousands of files were deleted, ext4's inode allocator scans
    for recently deleted inodes (`recently_deleted`, up to 5 minutes) and file
    creation gets several times slower. Benchmarks that delete each round's output
    measured that instead of the tools (curl went from 0.16 s to 0.5-0.8 s on
    1,000 files). On a fresh file system where nothing is deleted during the run,
    every tool creates its files under the same conditions.
    Falls back to a folder under BENCH_DIR (or /tmp) when it cannot mount."""

    def __init__(self, size_gb=6):
        base = os.environ.get("BENCH_DIR", "/tmp")
        self.image = None
        self.path = tempfile.mkdtemp(prefix="bench-fs-", dir=base)
        self.mounted = False
        if os.geteuid() != 0 or shutil.which("mkfs.ext4") is None:
            print("bench: not root or no mkfs.ext4; files go to", self.path, file=sys.stderr)
            return
        self.image = self.path + ".img"
        # A preallocated image and a loop device in direct-I/O mode: a flush (fsync,
        # syncfs) inside then costs what it costs on the disk below, not a second
        # round of page cache and block allocation in the file system holding the
        # image (a sparse, buffered image made every fsync several times dearer).
        self.loop = None
        ok = subprocess.run(["fallocate", "-l", str(size_gb << 30), self.image], capture_output=True).returncode == 0
        ok = ok and subprocess.run(["mkfs.ext4", "-q", "-F", self.image], capture_output=True).returncode == 0
        if ok:
            p = subprocess.run(["losetup", "--direct-io=on", "--show", "-f", self.image], capture_output=True,
                               text=True)
            ok = p.returncode == 0
            if ok:
                self.loop = p.stdout.strip()
        ok = ok and subprocess.run(["mount", self.loop, self.path], capture_output=True).returncode == 0
        if ok:
            self.mounted = True
        else:
            print("bench: could not mount a fresh ext4; files go to", self.path, file=sys.stderr)

    def describe(self):
        return "a fresh ext4 file system (preallocated image, loop device with direct I/O)" if self.mounted \
            else self.path

    def close(self):
        if self.mounted:
            subprocess.run(["umount", self.path])
        if self.loop:
            subprocess.run(["losetup", "-d", self.loop])
        shutil.rmtree(self.path, ignore_errors=True)
        if self.image:
            os.unlink(self.image)


def timed(cmd, cwd):
    """Runs cmd under /usr/bin/time; returns (seconds, peak RSS in KB)."""
    start = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "RSS=%M"] + cmd, cwd=cwd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({p.returncode}): {p.stderr[-2000:]}")
    rss = int(re.findall(r"RSS=(\d+)", p.stderr)[-1])
    return elapsed, rss


# Seconds of rest before every timed run (BENCH_COOLDOWN overrides). This VM's disk
# absorbs a few GB of writes at full speed and then slows every writer down by half
# or more until it has caught up (seen: lftp mirror --parallel=4 at 0.45 s, then
# 0.95-1.1 s after 5 GB, 0.44-0.51 s again after a minute's rest). Resting before
# each run keeps one tool's writes from slowing the next one.
COOLDOWN = float(os.environ.get("BENCH_COOLDOWN", "8"))


def alternate(tools, rounds, prepare, check=None):
    """Runs each tool once per round, in rotating order; returns {name: [(secs, rss)]}.
    check(name, cwd), when given, runs after each run (untimed), e.g. to verify the output."""
    results = {name: [] for name in tools}
    names = list(tools)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            cwd = prepare(name)
            time.sleep(COOLDOWN)
            results[name].append(timed(tools[name], cwd))
            if check:
                check(name, cwd)
    return results


# Suffix of a peer's row that runs it and then `sync -f .` (then_sync).
DURABLE = " + sync -f"


def then_sync(cmd):
    """cmd, then `sync -f .` (syncfs on the run folder's file system): the time until
    that peer's files are on the disk. Ferry flushes every file before it gets its
    final name; the peers never flush, so a plain row compares unlike work. One
    syncfs at the end is the cheapest way the peer's output could be made durable, a
    lower bound for a peer that did what Ferry does (and it promises less: the peer's
    files have their final names while still unflushed)."""
    return ["sh", "-c", '"$@" && exec sync -f .', "sh"] + cmd


def median(xs):
    return statistics.median(xs)
