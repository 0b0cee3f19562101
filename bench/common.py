"""Shared helpers for Ferry's side-by-side benchmarks: servers on loopback,
timing with peak RSS, alternating runs and medians."""
import os, re, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

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
    subprocess.run(["swift", "build", "-c", "release", "--product", "ferry"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    path = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()
    return os.path.join(path, "ferry")


class Nginx:
    def __init__(self, root, extra=""):
        self.dir = tempfile.mkdtemp(prefix="bench-nginx-")
        self.port = free_port()
        self.log = os.path.join(self.dir, "access.log")
        conf = f"""
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


def alternate(tools, rounds, prepare):
    """Runs each tool once per round, in rotating order; returns {name: [(secs, rss)]}."""
    results = {name: [] for name in tools}
    names = list(tools)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            cwd = prepare(name)
            results[name].append(timed(tools[name], cwd))
    return results


def median(xs):
    return statistics.median(xs)
