#!/usr/bin/env python3
"""Checks bench/link.py against itself, with real servers on loopback:

  1. rate: 100 MB (10^8 bytes) from nginx through `wifi` with curl: within 5% of
     100 MB / 40 Mbit/s = 20 s, and the file arrives byte for byte (jitter must
     not reorder anything);
  2. round trip: 1-byte pings on one connection to an echo server through `wifi`:
     6 ms +- 1 (median; p5 and p95 shown), and HTTP keep-alive requests to nginx;
     64 KiB responses one after another: a round trip plus their time at the rate
     (+- 2 ms; Nagle holding a last piece would add 40 ms);
     a new connection's first answer (TCP handshake + one request) about 2 round trips;
  3. FTP: curl through an `ftp:` forward with EPSV and with PASV: the data
     connections go through the link (the proxy counts them) and arrive intact;
  4. ceiling: what the proxy sustains with no limit (`loopback`) and on `lan`
     (1 Gbit/s), 1 GB with curl, and the proxy's CPU seconds for it.

Usage: bench/link_selfcheck.py [--skip-ceiling] [--out FILE (appends a markdown section)]
"""
import argparse, hashlib, os, shutil, socket, statistics, subprocess, sys, tempfile, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Nginx, Vsftpd
from link import PROFILES, LinkProcess


def make_file(path, size):
    block = os.urandom(1 << 20)
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, len(block))
            f.write(block[:n])
            left -= n


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def curl_time(url, out):
    p = subprocess.run(["curl", "-s", "-o", out, "-w", "%{time_total}", url], capture_output=True, text=True,
                       check=True)
    return float(p.stdout)


class Echo:
    """A one-thread echo server on 127.0.0.1 (for round trips without any server work)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.echo, args=(c,), daemon=True).start()

    @staticmethod
    def echo(c):
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c.sendall(b"hello\n")
        while True:
            d = c.recv(65536)
            if not d:
                break
            c.sendall(d)
        c.close()

    def stop(self):
        self.sock.close()


def pings(port, count=200):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    assert s.recv(6) == b"hello\n"
    times = []
    for _ in range(count):
        t = time.perf_counter()
        s.sendall(b"x")
        assert s.recv(1) == b"x"
        times.append(time.perf_counter() - t)
        time.sleep(0.002)
    s.close()
    return times


def first_answer(port, rounds=20):
    """connect() to the greeting's arrival: a TCP handshake's round trip plus the
    greeting's way back (the server speaks first, like FTP and SSH)."""
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        s = socket.create_connection(("127.0.0.1", port))
        s.recv(6)
        times.append(time.perf_counter() - t)
        s.close()
    return times


def http_requests(port, count=100):
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("HEAD", "/small.bin")
    c.getresponse().read()
    times = []
    for _ in range(count):
        t = time.perf_counter()
        c.request("HEAD", "/small.bin")
        c.getresponse().read()
        times.append(time.perf_counter() - t)
    c.close()
    return times


def http_gets(port, path, count=20):
    """Sequential GETs on one keep-alive connection: each response longer than
    the link's burst, so a piece held back (Nagle waiting for a delayed ACK)
    shows as 40 ms more per request."""
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", port)
    times = []
    for _ in range(count):
        t = time.perf_counter()
        c.request("GET", path)
        c.getresponse().read()
        times.append(time.perf_counter() - t)
    c.close()
    return times[1:]


def ms(xs):
    xs = sorted(xs)
    return (statistics.median(xs) * 1e3, xs[len(xs) // 20] * 1e3, xs[len(xs) * 19 // 20] * 1e3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-ceiling", action="store_true")
    ap.add_argument("--size-mb", type=int, default=100, help="MB (10^6) for the rate check")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="link-check-", dir=os.environ.get("BENCH_DIR", "/tmp"))
    lines = [f"### bench/link_selfcheck.py ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"load average {os.getloadavg()[0]:.1f})\n"]
    failures = []
    www = os.path.join(work, "www")
    os.makedirs(www)
    size = a.size_mb * 10**6
    make_file(os.path.join(www, "big.bin"), size)
    make_file(os.path.join(www, "small.bin"), 1000)
    make_file(os.path.join(www, "64k.bin"), 65536)
    nginx = Nginx(www)
    echo = Echo()
    try:
        # 1 and 2: wifi.
        wifi = PROFILES["wifi"]
        with LinkProcess("wifi", [("http", nginx.port), ("tcp", echo.port)]) as link:
            http_port, echo_port = link.ports
            out = os.path.join(work, "got.bin")
            cpu0 = link.cpu_seconds()
            secs = curl_time(f"http://127.0.0.1:{http_port}/big.bin", out)
            cpu = link.cpu_seconds() - cpu0
            expect = size * 8 / wifi.rate_bps
            same = sha256(out) == sha256(os.path.join(www, "big.bin"))
            os.unlink(out)
            ok = abs(secs / expect - 1) <= 0.05 and same
            lines.append(f"- rate, wifi: {a.size_mb} MB with curl in {secs:.2f} s, expected {expect:.2f} s "
                         f"({secs / expect * 100:.1f}%, {size * 8 / secs / 1e6:.1f} Mbit/s); identical: {same}; "
                         f"proxy CPU {cpu:.2f} s -> {'ok' if ok else 'FAIL'} (within 5%)")
            if not ok:
                failures.append("rate")
            rtt = ms(pings(echo_port))
            ok = abs(rtt[0] - 2 * wifi.latency * 1e3) <= 1
            lines.append(f"- round trip, wifi, 200 one-byte pings on one connection: median {rtt[0]:.2f} ms "
                         f"(p5 {rtt[1]:.2f}, p95 {rtt[2]:.2f}), expected 6 +- 1 -> {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append("rtt")
            h = ms(http_requests(http_port))
            lines.append(f"- HTTP HEAD to nginx, wifi, 100 on one keep-alive connection: median {h[0]:.2f} ms "
                         f"(p5 {h[1]:.2f}, p95 {h[2]:.2f})")
            g = ms(http_gets(http_port, "/64k.bin"))
            # One round trip, then 64 KiB at the rate less the 16 KiB burst.
            expect = 2 * wifi.latency * 1e3 + (65536 - 16384) * 8 / wifi.rate_bps * 1e3
            ok = abs(g[0] - expect) <= 2
            lines.append(f"- 64 KiB GETs from nginx, wifi, 19 one after another on one keep-alive connection: "
                         f"median {g[0]:.2f} ms (p5 {g[1]:.2f}, p95 {g[2]:.2f}), expected {expect:.1f} +- 2 "
                         f"-> {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append("sequential responses")
            f = ms(first_answer(echo_port))
            lines.append(f"- a new connection to the server's first bytes (server speaks first), wifi: "
                         f"median {f[0]:.2f} ms (p5 {f[1]:.2f}, p95 {f[2]:.2f}), expected 2 round trips = 12 ms")
        # Without the proxy, for reference.
        rtt = ms(pings(echo.port))
        lines.append(f"- round trip without the proxy: median {rtt[0]:.3f} ms")
        with LinkProcess("loopback", [("tcp", echo.port)]) as link:
            rtt = ms(pings(link.ports[0]))
        lines.append(f"- round trip through the proxy with profile loopback (no delay): median {rtt[0]:.3f} ms "
                     f"(the proxy's own cost)")
        # 3: FTP through the link.
        ftp_root = os.path.join(work, "ftp")
        os.makedirs(ftp_root)
        make_file(os.path.join(ftp_root, "a.bin"), 2 * 10**6)
        ftp = Vsftpd(ftp_root)
        try:
            with LinkProcess("wifi", [("ftp", ftp.port)]) as link:
                base = f"ftp://127.0.0.1:{link.ports[0]}"
                results = []
                for label, extra in (("EPSV", []), ("PASV", ["--disable-epsv"])):
                    out = os.path.join(work, f"ftp-{label}.bin")
                    t = time.perf_counter()
                    subprocess.run(["curl", "-s", "-o", out] + extra + [base + "/a.bin"], check=True)
                    t = time.perf_counter() - t
                    listing = subprocess.run(["curl", "-s"] + extra + [base + "/"], capture_output=True, text=True,
                                             check=True).stdout
                    results.append((label, t, sha256(out) == sha256(os.path.join(ftp_root, "a.bin")),
                                    "a.bin" in listing))
            stats = link.stats or {}
            data = stats.get("ftp_data_connections", 0)
            ok = data == 4 and all(r[2] and r[3] for r in results)
            lines.append(f"- FTP through wifi (vsftpd, curl): " + "; ".join(
                f"{label} 2 MB in {t:.2f} s (0.40 s of rate), identical {same}, listing {listed}"
                for label, t, same, listed in results) +
                f"; data connections through the link: {data} of 4 -> {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append("ftp")
        finally:
            ftp.stop()
        # 4: the ceiling.
        if not a.skip_ceiling:
            big = os.path.join(www, "1g.bin")
            make_file(big, 10**9)
            for profile in ("loopback", "lan"):
                with LinkProcess(profile, [("http", nginx.port)]) as link:
                    out = os.path.join(work, "got.bin")
                    cpu0 = link.cpu_seconds()
                    secs = curl_time(f"http://127.0.0.1:{link.ports[0]}/1g.bin", out)
                    cpu = link.cpu_seconds() - cpu0
                    os.unlink(out)
                rate = 8e9 / secs / 1e6
                target = PROFILES[profile].rate_bps
                lines.append(f"- ceiling, {profile}: 1 GB with curl in {secs:.2f} s = {rate:.0f} Mbit/s"
                             + (f" ({rate * 1e6 / target * 100:.0f}% of the profile's rate)" if target else "")
                             + f", proxy CPU {cpu:.2f} s ({cpu / secs * 100:.0f}% of a core)")
            os.unlink(big)
            out = os.path.join(work, "got.bin")
            secs = curl_time(f"http://127.0.0.1:{nginx.port}/big.bin", out)
            os.unlink(out)
            lines.append(f"- for reference, curl from nginx without the proxy: {size * 8 / secs / 1e6:.0f} Mbit/s")
    finally:
        echo.stop()
        nginx.stop()
        shutil.rmtree(work, ignore_errors=True)
    lines.append(f"\n{'all checks passed' if not failures else 'FAILED: ' + ', '.join(failures)}")
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "a") as f:
            f.write(text + "\n")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
