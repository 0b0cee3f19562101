#!/usr/bin/env python3
"""Crowding: can anyone who can connect lock `ferry serve` or `ferry card` out?
(docs/RELIABILITY.md, "Crowding"; the tests are Tests/FerryHardeningTests/CrowdingTests.swift.)

For each attack the script holds its connections open, then sends fresh probes
(a plain GET of a small page, one connection each) and reports how many were
answered within a second and how fast:

  idle       N keep-alive connections that asked once and then say nothing
  slowloris  N connections sending a request head one byte at a time, every
             connection that is closed opened again at once
  unauth     N connections to `ferry serve --token` answered 401, kept open

    python3 scripts/faults/crowd.py                       # serve: 100 of each; card: 40
    python3 scripts/faults/crowd.py --ferry .build/debug/ferry --probes 20

Loopback only; every attack stops by itself after `--seconds`. Exit 1 when a probe
went unanswered for over a second.
"""
import argparse, os, socket, statistics, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def start(args):
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    url = next(w for w in line.split() if w.startswith("http://"))
    hostport = url[len("http://"):].split("/")[0]
    host, port = hostport.rsplit(":", 1)
    return proc, host, int(port)


def probe(port, path, timeout=3.0):
    t = time.time()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout)
        s.settimeout(timeout)
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        data = s.recv(64)
        s.close()
        if data.startswith(b"HTTP/1."):
            return time.time() - t, data.split(b" ")[1].decode()
    except OSError:
        pass
    return None, None


class Attack:
    def __init__(self, kind, port, count, seconds, path):
        self.kind, self.port, self.count, self.path = kind, port, count, path
        self.stop_at = time.time() + seconds
        self.held = 0
        self.threads = [threading.Thread(target=self.run, daemon=True) for _ in range(count)]
        for t in self.threads:
            t.start()

    def run(self):
        while time.time() < self.stop_at:
            try:
                s = socket.create_connection(("127.0.0.1", self.port), 2)
                s.settimeout(0.5)
                head = f"GET {self.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
                if self.kind == "slowloris":
                    for b in head[:-2]:
                        if time.time() >= self.stop_at:
                            break
                        s.sendall(bytes([b]))
                        time.sleep(1.0)
                else:
                    s.sendall(head)
                    try:
                        s.recv(65536)
                    except socket.timeout:
                        pass
                    # Then silence, holding the connection.
                    while time.time() < self.stop_at:
                        try:
                            if s.recv(1) == b"":
                                break
                        except socket.timeout:
                            continue
                s.close()
            except OSError:
                time.sleep(0.05)

    def join(self):
        for t in self.threads:
            t.join()


def run_attack(name, port, kind, count, seconds, probes, path, probe_path):
    attack = Attack(kind, port, count, seconds, path)
    time.sleep(min(3.0, seconds / 3))
    times, unanswered = [], 0
    for _ in range(probes):
        t, status = probe(port, probe_path)
        if t is None or t > 1.0:
            unanswered += 1
        if t is not None:
            times.append(t)
        time.sleep(0.1)
    attack.join()
    med = statistics.median(times) if times else float("nan")
    print(f"{name}: {count} connections ({kind}); {probes - unanswered} of {probes} probes answered within 1 s"
          f" (median {med * 1000:.1f} ms, max {max(times) * 1000 if times else float('nan'):.1f} ms)", flush=True)
    return unanswered


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ferry")
    ap.add_argument("--probes", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=8)
    args = ap.parse_args()
    ferry = args.ferry
    if not ferry:
        subprocess.run(["swift", "build", "--product", "ferry"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        ferry = os.path.join(ROOT, ".build", "debug", "ferry")
    folder = tempfile.mkdtemp(prefix="ferry-crowd-")
    with open(os.path.join(folder, "a.txt"), "w") as f:
        f.write("hello\n")
    bad = 0
    serve, _, port = start([ferry, "serve", folder, "--port", "0", "--cache", os.path.join(folder, ".cache")])
    try:
        bad += run_attack("serve", port, "idle", 100, args.seconds, args.probes, "/api/list?path=/", "/api/list?path=/")
        bad += run_attack("serve", port, "slowloris", 100, args.seconds, args.probes, "/", "/api/list?path=/")
    finally:
        serve.kill()
        serve.wait()
    serve, _, port = start([ferry, "serve", folder, "--port", "0", "--token", "secret-token",
                            "--cache", os.path.join(folder, ".cache")])
    try:
        bad += run_attack("serve --token", port, "unauth", 80, args.seconds, args.probes, "/api/list?path=/",
                          "/api/list?path=/&token=secret-token")
    finally:
        serve.kill()
        serve.wait()
    card, _, port = start([ferry, "card", folder, "--port", "0", "--quiet"])
    try:
        bad += run_attack("card", port, "idle", 40, args.seconds, args.probes, "/a.txt", "/a.txt")
        bad += run_attack("card", port, "slowloris", 40, args.seconds, args.probes, "/a.txt", "/a.txt")
    finally:
        card.kill()
        card.wait()
    print("OK" if bad == 0 else f"{bad} probes unanswered within 1 s")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
