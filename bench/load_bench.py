#!/usr/bin/env python3
"""Load test for issue 7 item 3: wrk against `ferry card` and `ferry serve`, beside
nginx serving the same files in the same run (docs/RELIABILITY.md).

Each endpoint gets `wrk -t2 -c64 -d30s`. Reported: requests/s and bytes/s as a
ratio to nginx (files against nginx's file, listings against nginx's autoindex),
socket errors and non-2xx answers, and each Ferry server's resident memory and
open descriptors before, right after, and two seconds after the load.

`ferry card` runs twice: with --max-connections 64 (the comparison) and with its
default 8 (connections past the limit are refused at once: wrk counts them as
socket errors, and nothing else may fail).

Usage: bench/load_bench.py [--seconds 30] [--connections 64]
Needs: wrk, nginx (scripts/setup.sh --bench).
"""
import argparse, os, random, re, shutil, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, Nginx, ferry_binary, free_port, wait_port


def make_photos(root, count=20, size=1_000_000, seed=7):
    folder = os.path.join(root, "DCIM", "100__TSB")
    os.makedirs(folder)
    rng = random.Random(seed)
    for i in range(count):
        with open(os.path.join(folder, f"IMG_{i:04d}.JPG"), "wb") as f:
            f.write(b"\xff\xd8\xff\xe0" + rng.randbytes(size - 4))
    return folder


def process_stats(pid):
    with open(f"/proc/{pid}/status") as f:
        status = f.read()
    rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
    threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return {"rss_kib": rss, "fds": fds, "threads": threads}


def wrk(url, seconds, connections):
    out = subprocess.run(
        ["nice", "-n", "15", "wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", url],
        capture_output=True, text=True, check=True).stdout

    def number(pattern, text, default=0.0):
        m = re.search(pattern, text)
        return float(m.group(1)) if m else default

    def scaled(value, unit):
        return value * {"": 1, "B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}[unit]

    transfer = re.search(r"Transfer/sec:\s+([\d.]+)(\w*)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    return {
        "rps": number(r"Requests/sec:\s+([\d.]+)", out),
        "bytes_per_s": scaled(float(transfer.group(1)), transfer.group(2)) if transfer else 0,
        "requests": int(number(r"(\d+) requests in", out)),
        "non2xx": int(number(r"Non-2xx or 3xx responses: (\d+)", out)),
        "socket_errors": tuple(int(x) for x in errors.groups()) if errors else (0, 0, 0, 0),
        "p99": (re.search(r"99%\s+(\S+)", out) or [None, "?"])[1],
    }


class Server:
    def __init__(self, args, line_prefix):
        self.dir = tempfile.mkdtemp(prefix="bench-load-")
        self.log = os.path.join(self.dir, "log")
        self.proc = subprocess.Popen(args, stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        self.port = None
        while time.time() < deadline and self.port is None:
            text = open(self.log).read()
            m = re.search(re.escape(line_prefix) + r".*?127\.0\.0\.1:(\d+)", text)
            if m:
                self.port = int(m.group(1))
            else:
                time.sleep(0.05)
        if self.port is None:
            raise RuntimeError("did not start: " + open(self.log).read())
        wait_port(self.port)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--connections", type=int, default=64)
    a = parser.parse_args()
    ferry = ferry_binary()
    work = tempfile.mkdtemp(prefix="bench-load-data-")
    make_photos(work)
    one = "/DCIM/100__TSB/IMG_0007.JPG"
    nginx = Nginx(work, "location /DCIM/ { autoindex on; }")
    card = Server([ferry, "card", work, "--port", "0", "--max-connections", str(a.connections)], "ferry card: serving")
    card8 = Server([ferry, "card", work, "--port", "0"], "ferry card: serving")
    serve = Server([ferry, "serve", work, "--port", "0", "--cache", os.path.join(work, ".cache")], "ferry serve: open")
    runs = [
        ("nginx file", None, nginx.url(one), None),
        ("nginx autoindex", None, nginx.url("/DCIM/100__TSB/"), None),
        ("ferry card file", card, card.url(one), "nginx file"),
        ("ferry card command.cgi op=100", card, card.url("/command.cgi?op=100&DIR=/DCIM/100__TSB"), "nginx autoindex"),
        ("ferry card file, default limit 8", card8, card8.url(one), "nginx file"),
        ("ferry serve /api/list", serve, serve.url("/api/list?path=/DCIM/100__TSB"), "nginx autoindex"),
        ("ferry serve /api/file", serve, serve.url("/api/file?path=" + one), "nginx file"),
    ]
    results = {}
    try:
        for name, server, url, _ in runs:
            before = process_stats(server.proc.pid) if server else None
            result = wrk(url, a.seconds, a.connections)
            if server:
                result["during"] = process_stats(server.proc.pid)
                time.sleep(2)
                result["after"] = process_stats(server.proc.pid)
                result["before"] = before
                result["alive"] = server.proc.poll() is None
            results[name] = result
            print(f"{name}: {result['rps']:.0f} req/s", file=sys.stderr)
    finally:
        for s in (card, card8, serve):
            s.stop()
        nginx.stop()
        shutil.rmtree(work, ignore_errors=True)

    print(f"wrk -t2 -c{a.connections} -d{a.seconds}s, 20 files of 1 MB, {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"{'endpoint':36} {'req/s':>9} {'MB/s':>8} {'vs nginx':>9} {'p99':>8} {'non-2xx':>8} "
          f"{'sock err c/r/w/t':>17} {'RSS KiB before/after':>22} {'fds b/a':>8}")
    for name, server, _, peer in runs:
        r = results[name]
        ratio = f"{r['rps'] / results[peer]['rps']:.2f}x" if peer else ""
        mem = fds = ""
        if server:
            mem = f"{r['before']['rss_kib']}/{r['after']['rss_kib']}"
            fds = f"{r['before']['fds']}/{r['after']['fds']}"
            if not r["alive"]:
                mem += " DIED"
        errors = "/".join(str(x) for x in r["socket_errors"])
        print(f"{name:36} {r['rps']:9.0f} {r['bytes_per_s'] / 1e6:8.1f} {ratio:>9} {r['p99']:>8} {r['non2xx']:8d} "
              f"{errors:>17} {mem:>22} {fds:>8}")


if __name__ == "__main__":
    main()
