#!/usr/bin/env python3
"""Issue 32: Ferry and its peers over an emulated link (bench/link.py) in front of
every server, side by side in one run (alternating, medians), with the same
cases as the loopback benchmarks:

  tree   get -r of 1,000 files (10 folders x 100 x 64 KiB) from nginx autoindex
         pages: ferry vs wget -r -np -nH, lftp mirror (and --parallel=4); then a
         re-run with nothing new: ferry vs wget -r -N (http_bench.tree).
         Targets on wifi: first run >= 1.5x wget -r and lftp mirror; re-run >= 10x
         wget -r -N.
  many   1,000 x 64 KiB from nginx, 4 at a time: ferry -j 4 vs curl --parallel
         --parallel-max 4, and curl then `sync -f` (http_bench.many_files). Target
         on wifi: ferry no slower than curl + sync -f.
  ftp    a 500-file tree (4 KiB-4 MiB) from vsftpd, data connections through the
         link: ferry get -r -j 4 vs lftp mirror --parallel=4 (+ sync -f)
         (ftp_bench.tree; --files N for a smaller tree).
  jobs   ferry get -r of the autoindex tree with -j 4, 8 and 16, one run each
         (what limits it on a link with long round trips).
  sftp   the same tree from a local sshd: ferry get -r -j 4 vs lftp mirror
         (--parallel=4, + sync -f) and sftp -b get -r (sftp_bench.tree).
  big    one file of --size-mb MiB (1 GiB) from nginx: ferry vs curl and aria2c -x1,
         with peak RSS (http_bench.single_file). Target on internet: no slower than
         either, RSS at most 32 MB.
  sftpbig  one file of --size-mb MiB from the local sshd: ferry vs curl sftp://, sftp -b
         and lftp (sftp_bench.single_file). Target on lan: no slower than curl and sftp -b.

Usage: bench/link_bench.py [--link wifi] [--rounds N] [--cases tree,many,ftp,sftp,jobs,big,sftpbig] [--files N]
                           [--size-mb N]
                           [--ferry PATH] [--out FILE (appends)]
Needs: scripts/setup.sh --bench (nginx, vsftpd, wget, lftp, curl, /usr/bin/time).
"""
import argparse, os, shutil, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ftp_bench, http_bench, sftp_bench
from common import DURABLE, ferry_binary
from link import PROFILES, LinkProcess


def table(rows, ref):
    lines = ["| tool | seconds | ferry's speed-up | peak RSS MB |", "|---|---|---|---|"]
    for name, secs, rss in sorted(rows, key=lambda r: r[1]):
        lines.append(f"| {name} | {secs:.3f} | {secs / ref:.2f}x | {rss:.1f} |")
    return lines


def tree_case(ferry, rounds, work, link):
    only = ["ferry", "wget -r -np -nH", "lftp mirror", "lftp mirror --parallel=4"]
    rows, rerows, where, requests = http_bench.tree(ferry, rounds, work, link=link, only=only)
    ferry_secs = next(r[1] for r in rows if r[0] == "ferry")
    lines = [f"#### get -r of 1,000 files (10 folders x 100 x 64 KiB, 65.5 MB) from nginx autoindex pages\n",
             f"Into {where}. 65.5 MB at the link's rate alone takes "
             f"{65.5e6 * 8 / PROFILES[link].rate_bps:.1f} s.\n"]
    lines += table(rows, ferry_secs)
    lines.append("\nRequests to nginx in each tool's last first run: " +
                 ", ".join(f"{k} {v}" for k, v in requests.items()))
    for peer in ("wget -r -np -nH", "lftp mirror"):
        secs = next(r[1] for r in rows if r[0] == peer)
        lines.append(f"\nferry vs {peer}: {secs / ferry_secs:.2f}x (target 1.5x)")
    lines.append("\nRe-run with nothing new:\n")
    lines.append("| tool | seconds | exit code | requests to the server |")
    lines.append("|---|---|---|---|")
    for name, secs, code, reqs in sorted(rerows, key=lambda r: r[1]):
        lines.append(f"| {name} | {secs:.3f} | {code} | {reqs} |")
    wget = next(r[1] for r in rerows if r[0].startswith("wget"))
    for name, secs, code, _ in rerows:
        if name.startswith("ferry"):
            lines.append(f"\n{name} vs wget -r -N: {wget / secs:.1f}x (target 10x), exit {code}")
    return lines


def many_case(ferry, rounds, work, link):
    rows, where = http_bench.many_files(ferry, rounds, work, only=["ferry", "curl", "curl" + DURABLE], link=link)
    ferry_secs = next(r[1] for r in rows if r[0] == "ferry")
    lines = [f"#### 1,000 x 64 KiB from nginx, 4 at a time (65.5 MB)\n",
             f"Into {where}. 65.5 MB at the link's rate alone takes "
             f"{65.5e6 * 8 / PROFILES[link].rate_bps:.1f} s.\n"]
    lines += table(rows, ferry_secs)
    durable = next(r[1] for r in rows if r[0] == "curl" + DURABLE)
    lines.append(f"\nferry vs curl{DURABLE}: {durable / ferry_secs:.2f}x (target 1.0x)")
    return lines


def ftp_case(ferry, rounds, work, link, files):
    ftp_bench.check_tools()
    rows, tools, total, where = ftp_bench.tree(ferry, rounds, files, work, link=link)
    ferry_name = next(r[0] for r in rows if r[0].startswith("ferry -j 4"))
    ferry_secs = next(r[1] for r in rows if r[0] == ferry_name)
    lines = [f"#### get -r of an FTP tree of {files} files ({total / 1e6:.1f} MB) from vsftpd\n",
             f"Into {where}. {total / 1e6:.1f} MB at the link's rate alone takes "
             f"{total * 8 / PROFILES[link].rate_bps:.1f} s.\n"]
    lines += table(rows, ferry_secs)
    durable = next(r[1] for r in rows if r[0] == "lftp mirror --parallel=4" + DURABLE)
    lines.append(f"\nferry vs lftp mirror --parallel=4{DURABLE}: {durable / ferry_secs:.2f}x (target 1.0x)")
    lines.append("")
    lines += ftp_bench.command_lines(tools)
    return lines


def sftp_case(ferry, rounds, work, link, files):
    server = sftp_bench.Sshd()
    try:
        with LinkProcess(link, [("sftp", server.port)]) as proxy:
            server.through(proxy.ports[0])
            rows, tools, total, where = sftp_bench.tree(ferry, rounds, files, work, server,
                                                             transports=sftp_bench.TRANSPORTS)
    finally:
        server.stop()
    ferry_secs = next(r[1] for r in rows if r[0] == "ferry -j 4")
    lines = [f"#### get -r of an SFTP tree of {files} files ({total / 1e6:.1f} MB) from sshd\n",
             f"Into {where}. {total / 1e6:.1f} MB at the link's rate alone takes "
             f"{total * 8 / PROFILES[link].rate_bps:.1f} s.\n"]
    lines += table(rows, ferry_secs)
    durable = next(r[1] for r in rows if r[0] == "lftp mirror --parallel=4" + DURABLE)
    lines.append(f"\nferry vs lftp mirror --parallel=4{DURABLE}: {durable / ferry_secs:.2f}x (target 1.0x)")
    return lines


def big_table(rows, size_mb, link):
    ferry = next(r for r in rows if r[0] == "ferry")
    lines = [f"{size_mb} MiB at the link's rate alone takes {(size_mb << 20) * 8 / PROFILES[link].rate_bps:.1f} s.\n",
             "| tool | MB/s | seconds | ferry's speed-up | peak RSS MB |", "|---|---|---|---|---|"]
    for name, mbps, secs, rss in sorted(rows, key=lambda r: r[2]):
        lines.append(f"| {name} | {mbps:.1f} | {secs:.3f} | {secs / ferry[2]:.2f}x | {rss:.1f} |")
    return lines


def big_case(ferry, rounds, work, link, size_mb):
    rows = http_bench.single_file(ferry, rounds, size_mb, work, link=link, only=["ferry", "curl", "aria2c"])
    lines = [f"#### One file of {size_mb} MiB from nginx (aria2c with -x1, its default)\n"]
    lines += big_table(rows, size_mb, link)
    ferry_rss = next(r[3] for r in rows if r[0] == "ferry")
    lines.append(f"\nferry's peak RSS {ferry_rss:.1f} MB (target at most 32 MB)")
    return lines


def sftp_big_case(ferry, rounds, work, link, size_mb):
    server = sftp_bench.Sshd()
    try:
        with LinkProcess(link, [("sftp", server.port)]) as proxy:
            server.through(proxy.ports[0])
            rows, tools = sftp_bench.single_file(ferry, rounds, size_mb, work, server,
                                                          transports=sftp_bench.TRANSPORTS)
    finally:
        server.stop()
    lines = [f"#### One file of {size_mb} MiB from sshd (SSH login included)\n"]
    lines += big_table(rows, size_mb, link)
    return lines


def jobs_case(ferry, work, link, jobs=(None, 4, 8, 16)):
    """ferry get -r of the 1,000-file tree with more transfers at once: on a link
    with long round trips, 4 at a time are bound by them, not by the rate. None:
    no -j (4, doubled for a server whose answers take 15 ms or more)."""
    www = os.path.join(work, "www-jobs")
    count = http_bench.make_tree(www)
    nginx = http_bench.Nginx(www, extra="autoindex on; absolute_redirect off;")
    lines = [f"#### ferry get -r of the 1,000-file tree by -j (one run each)\n",
             "| -j | seconds | share of the link's rate |", "|---|---|---|"]
    floor = 65.5e6 * 8 / PROFILES[link].rate_bps
    try:
        with LinkProcess(link, [("http", nginx.port)]) as proxy:
            url = f"http://127.0.0.1:{proxy.ports[0]}/tree/"
            for j in jobs:
                out = os.path.join(work, f"jobs-{j}")
                os.makedirs(out)
                given = ["-j", str(j)] if j else []
                secs, code = http_bench.timed_any([ferry, "get", "-r", url, "-o", "tree", "--quiet"] + given, out)
                got = http_bench.count_files(out)
                if code != 0 or got != count:
                    raise RuntimeError(f"ferry -j {j} exited {code} with {got} of {count} files")
                lines.append(f"| {j or 'not given'} | {secs:.2f} | {floor / secs * 100:.0f}% |")
                shutil.rmtree(out)
    finally:
        nginx.stop()
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--link", choices=sorted(PROFILES), default="wifi")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cases", default="tree,many")
    ap.add_argument("--files", type=int, default=500, help="files of the FTP tree")
    ap.add_argument("--size-mb", type=int, default=1024, help="the file of the big and sftpbig cases")
    ap.add_argument("--ferry", default=None, metavar="PATH", help="default: a release build of this tree")
    ap.add_argument("--out", default=None, help="append the markdown section to this file")
    a = ap.parse_args()
    ferry = os.path.abspath(a.ferry) if a.ferry else ferry_binary()
    work = tempfile.mkdtemp(prefix="ferry-link-bench-", dir=os.environ.get("BENCH_DIR", "/tmp"))
    profile = PROFILES[a.link]
    lines = [f"### On `{a.link}` ({profile.describe()}), {a.rounds} rounds, alternating, median "
             f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.1f})\n",
             f"`{' '.join(['python3', 'bench/link_bench.py'] + sys.argv[1:])}`\n"]
    printed = 0
    try:
        for case in a.cases.split(","):
            if case == "tree":
                lines += tree_case(ferry, a.rounds, work, a.link)
            elif case == "many":
                lines += many_case(ferry, a.rounds, work, a.link)
            elif case == "ftp":
                lines += ftp_case(ferry, a.rounds, work, a.link, a.files)
            elif case == "jobs":
                lines += jobs_case(ferry, work, a.link)
            elif case == "sftp":
                lines += sftp_case(ferry, a.rounds, work, a.link, a.files)
            elif case == "big":
                lines += big_case(ferry, a.rounds, work, a.link, a.size_mb)
            elif case == "sftpbig":
                lines += sftp_big_case(ferry, a.rounds, work, a.link, a.size_mb)
            else:
                sys.exit(f"link_bench: unknown case {case}")
            lines.append("")
            print("\n".join(lines[printed:]), flush=True)
            printed = len(lines)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines.append(f"load average after: {os.getloadavg()[0]:.1f}")
    print(lines[-1])
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
