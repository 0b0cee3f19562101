#!/usr/bin/env python3
"""WebDAV uploads: one large file to Apache mod_dav, side by side in one run, alternating,
medians; every tool through the same emulated link (bench/link.py), or on loopback.

  ferry put FILE dav://...    (each --ferry build: pieces of 16 MiB with Content-Range
                               where the server takes them, as Apache does)
  curl -T FILE http://...     (one plain PUT)

What it measures: what the pieces cost against one PUT (a PROPFIND and a PUT per 16 MiB,
and Apache reopening the file for each), the price of an upload that can go on after a
kill. Apache writes into a folder on /tmp; every run's remote file is removed before the
next, untimed.

Usage: bench/webdav_put_bench.py [--link lan|wifi|internet|none] [--size-mb N] [--rounds N]
       [--ferry BIN ...] [--out FILE]
"""
import argparse, os, shutil, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ferry_binary, free_port, median, timed, wait_port
from link import PROFILES, LinkProcess

MODULES = ["mpm_event", "authz_core", "dav", "dav_fs", "mime", "alias", "log_config"]


class ApacheDAV:
    """Apache httpd (-X, one process) with mod_dav_fs at /dav/, as the tests'
    ApacheDAVServer (Sources/FerryTestSupport/WebDAVTestServers.swift) configures it."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="bench-apache-dav-")
        self.root = os.path.join(self.dir, "root")
        empty = os.path.join(self.dir, "empty")
        os.makedirs(self.root)
        os.makedirs(empty)
        self.port = free_port()
        as_root = os.getuid() == 0
        if as_root:
            subprocess.run(["chmod", "a+rwx", self.dir, self.root], check=True)
        folder = "/usr/lib/apache2/modules"
        load = "\n".join(f"LoadModule {m}_module {folder}/mod_{m}.so" for m in MODULES
                         if os.path.exists(f"{folder}/mod_{m}.so"))
        conf = f"""ServerRoot {self.dir}
DefaultRuntimeDir {self.dir}
PidFile {self.dir}/httpd.pid
Listen 127.0.0.1:{self.port}
ServerName 127.0.0.1
{load}
{"User www-data" + chr(10) + "Group www-data" if as_root else ""}
ErrorLog {self.dir}/error.log
TypesConfig /dev/null
LimitRequestBody 0
DavLockDB {self.dir}/davlock
DocumentRoot "{empty}"
Alias /dav "{self.root}"
<Directory "{self.root}">
  Dav On
  Require all granted
</Directory>
"""
        with open(os.path.join(self.dir, "httpd.conf"), "w") as f:
            f.write(conf)
        self.proc = subprocess.Popen(["apache2", "-X", "-f", os.path.join(self.dir, "httpd.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port)

    def clear(self):
        for name in os.listdir(self.root):
            os.unlink(os.path.join(self.root, name))

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--link", default="lan", choices=sorted(PROFILES) + ["none"])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ferry", action="append", default=[])
    ap.add_argument("--out")
    a = ap.parse_args()
    ferries = a.ferry or [ferry_binary()]
    work = tempfile.mkdtemp(prefix="bench-dav-put-")
    src = os.path.join(work, "big.bin")
    with open(src, "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(a.size_mb):
            f.write(chunk)
    size = a.size_mb << 20
    server = ApacheDAV()
    proxy = None
    try:
        port = server.port
        if a.link != "none":
            proxy = LinkProcess(a.link, [("http", server.port)])
            port = proxy.ports[0]
        tools = {}
        for i, f in enumerate(ferries):
            name = "ferry put" if len(ferries) == 1 else f"ferry[{i}] put"
            tools[name] = [f, "put", src, f"dav://127.0.0.1:{port}/dav/big.bin", "--quiet"]
        tools["curl -T"] = ["curl", "-sS", "-f", "-T", src, f"http://127.0.0.1:{port}/dav/big.bin"]
        results = {name: [] for name in tools}
        names = list(tools)
        for r in range(a.rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                server.clear()
                subprocess.run(["sync"])
                time.sleep(2)
                secs, rss = timed(tools[name], work)
                held = os.path.getsize(os.path.join(server.root, "big.bin"))
                if held != size:
                    raise RuntimeError(f"{name}: the server holds {held} of {size} bytes")
                results[name].append((secs, rss))
        link = "loopback" if a.link == "none" else f"`{a.link}`"
        lines = [f"#### One file of {a.size_mb} MiB to Apache mod_dav over {link} "
                 f"({a.rounds} rounds, alternating, medians)\n",
                 f"`python3 bench/webdav_put_bench.py {' '.join(sys.argv[1:])}`\n",
                 "| tool | seconds | MB/s | vs curl -T | peak RSS MB |", "|---|---|---|---|---|"]
        ref = median([x[0] for x in results["curl -T"]])
        for name, rs in sorted(results.items(), key=lambda kv: median([x[0] for x in kv[1]])):
            s = median([x[0] for x in rs])
            lines.append(f"| {name} | {s:.3f} | {size / s / 1e6:.1f} | {s / ref:.2f}x | "
                         f"{median([x[1] for x in rs]) / 1024:.1f} |")
        if len(ferries) > 1:
            lines.append("")
            lines += [f"- ferry[{i}]: `{f}`" for i, f in enumerate(ferries)]
        text = "\n".join(lines)
        print(text)
        if a.out:
            with open(a.out, "a") as fh:
                fh.write(text + "\n")
    finally:
        if proxy:
            proxy.stop()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
