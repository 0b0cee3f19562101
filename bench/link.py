#!/usr/bin/env python3
"""A link emulator for the benchmarks: a userspace TCP proxy on 127.0.0.1 that
puts a slower, farther network between a client and a server on loopback.

Every forward of one link shares that link: one token bucket per direction (all
connections through the link share its rate, as on a real Wi-Fi), a latency per
direction and a jitter. Per chunk of bytes:

    wire time   = the direction's token bucket (rate, a small burst), shared
    delivery    = wire time + latency + uniform(-jitter, +jitter), never before
                  the previous chunk of that connection and direction

so jitter never reorders bytes within a connection (TCP does not deliver out of
order). A new connection costs what TCP's handshake costs: the proxy connects to
the server one latency after the client connected (so a server's greeting reaches
the client two round trips after it connected), and the client's first bytes
leave no sooner than one round trip after it connected (SYN, SYN-ACK), arriving
one latency later (so an HTTP request on a new connection is answered after two
round trips, as on a real link). Reads stop when a direction holds more than its queue (the link's
bandwidth-delay product plus a router queue), so a fast sender is held back by
TCP's own flow control on loopback.

FTP forwards (`ftp:` in --forward) rewrite the server's 227 (PASV) and 229 (EPSV)
replies so that every data connection also goes through this link, on a
listener opened for that reply. Active mode (PORT/EPRT) is not rewritten: its
data connections would bypass the link (all the benchmarks' clients use passive
mode), and FTPS (after a 234 reply) passes through as bytes, with its data
connections unrewritten (the replies are encrypted).

Not emulated: packet loss, TCP's slow start and congestion window over the
emulated delay (each side's TCP runs over loopback, with the proxy's queue as
the link's buffer), MTU.

Profiles (rate per direction, latency each way, jitter):
    lan       1 Gbit/s, 0.25 ms
    wifi      40 Mbit/s, 3 ms, +-1 ms
    internet  100 Mbit/s, 20 ms
    loopback  no limit, no delay (the proxy's own cost)

As a command:
    bench/link.py --profile wifi --forward 127.0.0.1:8080 --forward ftp:127.0.0.1:2121
prints one line per forward, `LISTEN_PORT -> HOST:PORT`, then `ready`, and runs
until SIGTERM or SIGINT; with --stats FILE it writes counters (connections,
bytes, per forward) as JSON when it stops.

From a bench script (a child process, so its CPU does not share the script's GIL):
    from link import LinkProcess
    with LinkProcess("wifi", [("http", nginx.port)]) as link:
        url = f"http://127.0.0.1:{link.ports[0]}/"
"""
import argparse, asyncio, collections, json, os, random, re, selectors, signal, socket, subprocess, sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    rate_bps: float  # bits per second, each direction; 0: no limit
    latency: float  # seconds, each way
    jitter: float = 0.0  # seconds: delivery time +- up to this, uniformly

    def describe(self):
        rate = "no limit" if not self.rate_bps else (
            f"{self.rate_bps / 1e9:g} Gbit/s" if self.rate_bps >= 1e9 else f"{self.rate_bps / 1e6:g} Mbit/s")
        text = f"{rate}, {self.latency * 1e3:g} ms each way"
        return text + (f", jitter +-{self.jitter * 1e3:g} ms" if self.jitter else "")


PROFILES = {
    "lan": Profile(1e9, 0.25e-3),
    "wifi": Profile(40e6, 3e-3, 1e-3),
    "internet": Profile(100e6, 20e-3),
    "loopback": Profile(0, 0),
}


class Direction:
    """One direction of a link: a token bucket shared by all its connections, in
    virtual time (GCRA): `tat` is when the bucket would be full again."""

    def __init__(self, rate_bps, burst):
        self.rate = rate_bps / 8  # bytes per second
        self.tolerance = burst / self.rate if self.rate else 0
        self.tat = 0.0
        self.bytes = 0

    def book(self, n, now):
        """When n bytes offered at `now` have gone over the wire."""
        self.bytes += n
        if not self.rate:
            return now
        self.tat = max(self.tat, now - self.tolerance) + n / self.rate
        return max(self.tat, now)


class Link:
    def __init__(self, profile, loop, seed=None):
        self.profile = profile
        self.loop = loop
        self.random = random.Random(seed)
        rate = profile.rate_bps / 8
        # A burst of 1 ms of the rate (at least 16 KiB): what a NIC or an access
        # point sends back to back. Pieces of 0.5 ms (4-64 KiB): a 256 KiB read is
        # delivered progressively, and connections share the rate fairly.
        burst = max(16 << 10, rate * 1e-3)
        self.piece = int(min(64 << 10, max(4 << 10, rate * 0.5e-3))) if rate else 256 << 10
        # The bytes one direction of one connection may hold: twice the
        # bandwidth-delay product plus a router's queue, at least 256 KiB.
        self.queue = int(max(256 << 10, 2 * rate * (profile.latency + profile.jitter) + burst)) if rate else 1 << 20
        self.up = Direction(profile.rate_bps, burst)
        self.down = Direction(profile.rate_bps, burst)
        self.forwards = []

    def delay(self):
        p = self.profile
        if not p.jitter:
            return p.latency
        return max(0.0, p.latency + self.random.uniform(-p.jitter, p.jitter))

    async def forward(self, host, port, kind="tcp", listen_port=0, once=False):
        """Listens on 127.0.0.1:listen_port (0: a free one) and forwards each
        connection to host:port through this link. Returns the Forward."""
        fwd = Forward(self, host, port, kind, once)
        await fwd.start(listen_port)
        return fwd

    def stats(self):
        return {"profile": self.profile.describe(), "bytes_up": self.up.bytes, "bytes_down": self.down.bytes,
                "forwards": [f.stats() for f in self.forwards if not f.once],
                "ftp_data_connections": sum(f.connections for f in self.forwards if f.once)}


class Forward:
    def __init__(self, link, host, port, kind, once):
        self.link, self.host, self.port, self.kind, self.once = link, host, port, kind, once
        self.connections = 0
        self.server = None
        self.timeout = None
        link.forwards.append(self)

    async def start(self, listen_port):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", listen_port))
        sock.listen(128)
        self.listen_port = sock.getsockname()[1]
        self.server = await self.link.loop.create_server(lambda: ClientSide(self), sock=sock)
        if self.once:
            # A passive data port nobody connects to is closed after a while.
            self.timeout = self.link.loop.call_later(120, self.close)

    def accepted(self):
        self.connections += 1
        if self.once:
            self.close()

    def close(self):
        if self.timeout:
            self.timeout.cancel()
            self.timeout = None
        if self.server:
            self.server.close()
            self.server = None

    def stats(self):
        return {"listen": self.listen_port, "target": f"{self.host}:{self.port}", "kind": self.kind,
                "connections": self.connections}


class Pipe:
    """One direction of one connection: chunks wait in a queue until their
    delivery time, then go to the other side's transport."""

    def __init__(self, link, direction, src_protocol, floor=0.0, rewrite=None):
        self.link, self.direction, self.src = link, direction, src_protocol
        self.loop = link.loop
        self.dst = None  # the other side's transport, once connected
        self.queue = collections.deque()
        self.queued = 0
        self.last = 0.0  # delivery time of the previous chunk
        self.floor = floor  # no byte leaves before this (the handshake)
        self.timer = None
        self.blocked = False  # the destination's write buffer is full
        self.paused = False  # the source's reading is paused
        self.eof_sent = False
        self.rewrite = rewrite

    def feed(self, data):
        if self.rewrite:
            data = self.rewrite(data)
            if not data:
                return
        now = max(self.loop.time(), self.floor)
        piece = self.link.piece
        for i in range(0, len(data), piece):
            chunk = data[i:i + piece]
            at = max(self.last, self.direction.book(len(chunk), now) + self.link.delay())
            self.last = at
            self.queue.append((at, chunk))
            self.queued += len(chunk)
        if self.queued > self.link.queue and not self.paused:
            self.paused = True
            self.src.transport.pause_reading()
        self.schedule()

    def feed_eof(self):
        at = max(self.last, max(self.loop.time(), self.floor) + self.link.profile.latency)
        self.last = at
        self.queue.append((at, None))
        self.schedule()

    def schedule(self):
        if self.timer is None and self.queue and not self.blocked and self.dst is not None:
            self.timer = self.loop.call_at(self.queue[0][0], self.flush)

    def flush(self):
        self.timer = None
        if self.dst is None or self.dst.is_closing():
            return
        now = self.loop.time() + 50e-6
        out = []
        eof = False
        while self.queue and self.queue[0][0] <= now:
            _, chunk = self.queue.popleft()
            if chunk is None:
                eof = True
                break
            out.append(chunk)
            self.queued -= len(chunk)
        if out:
            self.dst.write(b"".join(out))
        if eof:
            self.eof_sent = True
            try:
                if self.dst.can_write_eof():
                    self.dst.write_eof()
            except OSError:  # the other side is gone already (ENOTCONN)
                self.dst.close()
            self.src.peer_eof()
            return
        if self.paused and self.queued <= self.link.queue // 2:
            self.paused = False
            self.src.transport.resume_reading()
        self.schedule()

    def cancel(self):
        if self.timer:
            self.timer.cancel()
            self.timer = None


class Side(asyncio.Protocol):
    transport = None
    pipe = None  # the pipe this side feeds
    other = None
    closed = False
    eof_in = False

    def data_received(self, data):
        self.pipe.feed(data)

    def eof_received(self):
        self.eof_in = True
        self.pipe.feed_eof()
        return True  # half-close: keep writing the other direction

    def pause_writing(self):
        self.other.pipe.blocked = True

    def resume_writing(self):
        self.other.pipe.blocked = False
        self.other.pipe.schedule()

    def peer_eof(self):
        # This side's bytes, EOF included, have all reached the other side: once
        # both directions are done, the connection is over.
        if self.other is not None and self.other.pipe.eof_sent and self.pipe.eof_sent:
            self.transport.close()
            self.other.transport.close()

    def connection_lost(self, exc):
        self.closed = True
        if not self.eof_in and self.pipe is not None:
            self.pipe.feed_eof()  # a reset: deliver what came, then end
        if exc is not None and self.other is not None and self.other.transport is not None:
            # The other side learns of a reset one latency later.
            self.pipe.link.loop.call_later(self.pipe.link.profile.latency, self.other.transport.abort)


def no_delay(transport):
    # asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP, and an
    # accepted socket's is 0: without it Nagle holds a response's last piece until
    # the client's delayed ACK (40 ms), 64 KiB then took 45 ms instead of 13 on wifi.
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class ClientSide(Side):
    def __init__(self, forward):
        self.forward = forward
        self.link = forward.link

    def connection_made(self, transport):
        self.transport = transport
        no_delay(transport)
        self.forward.accepted()
        link = self.link
        now = link.loop.time()
        latency = link.profile.latency
        self.pipe = Pipe(link, link.up, self, floor=now + 2 * latency)
        self.server = ServerSide(self)
        self.other = self.server
        self.server.other = self
        rewrite = FtpReplies(self.forward).rewrite if self.forward.kind == "ftp" else None
        self.server.pipe = Pipe(link, link.down, self.server, rewrite=rewrite)
        # The server accepts when the handshake's last ACK arrives: SYN (one
        # latency), SYN-ACK (two), ACK (three). The client's bytes leave with
        # that ACK at the earliest (the floor above).
        link.loop.call_later(3 * latency, lambda: asyncio.ensure_future(self.connect()))

    async def connect(self):
        if self.closed:
            return
        try:
            await self.link.loop.create_connection(lambda: self.server, self.forward.host, self.forward.port)
        except OSError:
            self.link.loop.call_later(self.link.profile.latency, self.transport.abort)
            self.pipe.cancel()

    def connection_lost(self, exc):
        super().connection_lost(exc)
        if self.server.transport is None:
            self.pipe.cancel()


class ServerSide(Side):
    def __init__(self, client):
        self.other = client

    def connection_made(self, transport):
        self.transport = transport
        no_delay(transport)
        # Both pipes can deliver now: client->server into this transport,
        # server->client into the client's.
        self.other.pipe.dst = transport
        self.pipe.dst = self.other.transport
        if self.other.closed and not self.other.pipe.queue:
            transport.close()
            return
        self.other.pipe.schedule()


class FtpReplies:
    """Rewrites an FTP server's passive replies so that the data connection goes
    through a new listener on the same link."""
    PASV = re.compile(rb"^227 (.*?)(\d+),(\d+),(\d+),(\d+),(\d+),(\d+)(.*)$", re.S)
    EPSV = re.compile(rb"^229 (.*?)\((.)(\2)(\2)(\d+)(\2)\)(.*)$", re.S)

    def __init__(self, forward):
        self.forward = forward
        self.buffer = b""
        self.plain = False

    def rewrite(self, data):
        if self.plain:
            return data
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        out = []
        for n, line in enumerate(lines):
            out.append(self.line(line + b"\n"))
            if line.startswith(b"234 "):  # AUTH TLS accepted: what follows is TLS
                self.plain = True
                out.append(b"".join(l + b"\n" for l in lines[n + 1:]) + self.buffer)
                self.buffer = b""
                break
        return b"".join(out)

    def open_data(self, host, port):
        link = self.forward.link
        fwd = Forward(link, host, port, "ftp-data", once=True)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(4)
        fwd.listen_port = sock.getsockname()[1]

        async def serve():
            fwd.server = await link.loop.create_server(lambda: ClientSide(fwd), sock=sock)
            fwd.timeout = link.loop.call_later(120, fwd.close)
        # The listening socket already queues connections; serving starts at once,
        # well before the rewritten reply reaches the client a latency later.
        asyncio.ensure_future(serve())
        return fwd.listen_port

    def line(self, line):
        m = self.PASV.match(line)
        if m:
            host = ".".join(x.decode() for x in m.groups()[1:5])
            port = self.open_data(host, int(m.group(6)) * 256 + int(m.group(7)))
            return (b"227 " + m.group(1) + b"127,0,0,1,%d,%d" % (port >> 8, port & 255) + m.group(8))
        m = self.EPSV.match(line)
        if m:
            d = m.group(2)
            port = self.open_data(self.forward.host, int(m.group(5)))
            return b"229 " + m.group(1) + b"(" + d * 3 + b"%d" % port + d + b")" + m.group(7)
        return line


def parse_forward(text):
    """[KIND:]HOST:PORT or [KIND:]PORT (host 127.0.0.1); KIND is tcp (default) or ftp."""
    parts = text.split(":")
    kind = "tcp"
    if parts[0] in ("tcp", "ftp", "http", "sftp", "ssh"):
        kind = "ftp" if parts[0] == "ftp" else "tcp"
        parts = parts[1:]
    host = parts[0] if len(parts) == 2 else "127.0.0.1"
    return kind, host, int(parts[-1])


def profile_from(args):
    base = PROFILES[args.profile]
    return Profile(args.rate_mbit * 1e6 if args.rate_mbit is not None else base.rate_bps,
                   args.latency_ms / 1e3 if args.latency_ms is not None else base.latency,
                   args.jitter_ms / 1e3 if args.jitter_ms is not None else base.jitter)


def new_loop():
    # select() rather than epoll: epoll_wait's timeout is in whole milliseconds
    # (asyncio rounds every wait up to the next ms), select() takes microseconds,
    # and a 0.25 ms or 3 ms latency must not become 1 ms or 4 ms. The proxy holds
    # a few dozen sockets at a time, far below select()'s 1,024.
    return asyncio.SelectorEventLoop(selectors.SelectSelector())


async def run(profile, forwards, stats_file, seed):
    loop = asyncio.get_running_loop()
    link = Link(profile, loop, seed)
    for kind, host, port in forwards:
        fwd = await link.forward(host, port, kind)
        print(f"{fwd.listen_port} -> {host}:{port}", flush=True)
    print("ready", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    if stats_file:
        with open(stats_file, "w") as f:
            json.dump(link.stats(), f, indent=1)


def main():
    ap = argparse.ArgumentParser(description="TCP link emulator on 127.0.0.1 (see the module's doc)")
    ap.add_argument("--profile", choices=sorted(PROFILES), default="wifi")
    ap.add_argument("--rate-mbit", type=float, help="override the profile's rate (Mbit/s each way; 0: none)")
    ap.add_argument("--latency-ms", type=float, help="override the profile's latency (each way)")
    ap.add_argument("--jitter-ms", type=float, help="override the profile's jitter")
    ap.add_argument("--forward", action="append", required=True, metavar="[ftp:]HOST:PORT")
    ap.add_argument("--stats", metavar="FILE", help="write counters as JSON when stopped")
    ap.add_argument("--seed", type=int, default=None, help="seed of the jitter")
    ap.add_argument("--nice", action=argparse.BooleanOptionalAction, default=True,
                    help="run at nice -10 when root (default; --no-nice to leave it)")
    a = ap.parse_args()
    for f in a.forward:
        if parse_forward(f)[1] not in ("127.0.0.1", "localhost"):
            sys.exit("link: only 127.0.0.1 may be forwarded to")
    if a.nice and os.geteuid() == 0:
        # The proxy stands for a network, which does not wait for a CPU: on a
        # loaded machine a delivery that waits for this process's turn would add
        # to the latency. Its work at 40-100 Mbit/s is a few % of a core.
        os.nice(-10)
    loop = new_loop()
    try:
        loop.run_until_complete(run(profile_from(a), [parse_forward(f) for f in a.forward], a.stats, a.seed))
    finally:
        loop.close()


class LinkProcess:
    """bench/link.py as a child process, for bench scripts. forwards: a list of
    (kind, port) with kind "http", "ftp", "sftp" or "tcp", all to 127.0.0.1 and
    all over the same link; `ports` are the listening ports in the same order.
    stop() (or leaving the `with`) ends it; `stats` then holds its counters."""

    def __init__(self, profile, forwards, **overrides):
        import tempfile
        self.profile = PROFILES[profile]
        fd, self.stats_file = tempfile.mkstemp(prefix="bench-link-", suffix=".json")
        os.close(fd)
        cmd = [sys.executable, os.path.abspath(__file__), "--profile", profile, "--stats", self.stats_file]
        for key, value in overrides.items():
            cmd += ["--" + key.replace("_", "-"), str(value)]
        for kind, port in forwards:
            cmd += ["--forward", f"{'ftp' if kind == 'ftp' else 'tcp'}:127.0.0.1:{port}"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        self.ports = []
        for line in self.proc.stdout:
            if line.strip() == "ready":
                break
            self.ports.append(int(line.split()[0]))
        if len(self.ports) != len(forwards):
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("bench/link.py did not start")
        self.stats = None

    def cpu_seconds(self):
        """User + system CPU seconds the proxy used so far (from /proc)."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        try:
            with open(self.stats_file) as f:
                self.stats = json.load(f)
        except (OSError, ValueError):
            self.stats = None
        if os.path.exists(self.stats_file):
            os.unlink(self.stats_file)
        return self.stats

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


if __name__ == "__main__":
    main()
