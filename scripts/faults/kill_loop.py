#!/usr/bin/env python3
"""Kill loop: `ferry sync` from an emulated card, killed with SIGKILL at random
moments, run again and again, then once to the end; checks that no photo was
lost, corrupted or imported twice (docs/RELIABILITY.md, "Kill loops").

Each round makes a card (`ferry card`, rate-limited so a kill lands mid-file) with
photos of random sizes, some sharing a name and a size with a different photo
already in the destination (raw files have one size per camera, numbering starts
again after a format: the case that once lost photos), and runs

    ferry sync flashair://CARD/DCIM DEST [--layout date] [--delete-after]

killing it after a random delay, `--kills` times, then lets one run finish. The
invariants, checked after every round:

  * every photo the card had is, byte for byte, either still on the card or in
    DEST (by SHA-256): none lost;
  * every photo the card no longer has is in DEST with its exact bytes: delete-after
    deleted only verified copies;
  * the older local files DEST had before are untouched;
  * no photo is in DEST twice (by SHA-256), no `.part` or journal is left, and the
    final run reports no failure;
  * a further run imports nothing.

    python3 scripts/faults/kill_loop.py                 # 4 layouts x 10 rounds x 8 kills
    python3 scripts/faults/kill_loop.py --rounds 2 --kills 4 --ferry .build/debug/ferry

Loopback only. Exit status 1 when any invariant failed.
"""
import argparse, hashlib, json, os, random, shutil, signal, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tree(folder, skip_history=True):
    out = {}
    for dirpath, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, folder)
            if skip_history and rel.startswith(".ferry-sync"):
                continue
            out[rel] = p
    return out


class Card:
    def __init__(self, ferry, folder, rate):
        self.proc = subprocess.Popen(
            [ferry, "card", folder, "--port", "0", "--rate", str(rate), "--max-connections", "1", "--quiet"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        # "ferry card: serving DIR at http://127.0.0.1:PORT/" (the first line names the URL).
        url = next(w for w in line.split() if w.startswith("http://"))
        self.base = "flashair://" + url[len("http://"):].rstrip("/")

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def make_card(folder, rnd, photos):
    dcim = os.path.join(folder, "DCIM", "100CANON")
    os.makedirs(dcim)
    files = {}
    for i in range(photos):
        size = rnd.choice([150_000, 400_000, 1_200_000, 2_500_000])
        name = f"IMG_{i + 1:04d}.CR2"
        data = rnd.randbytes(size)
        p = os.path.join(dcim, name)
        with open(p, "wb") as f:
            f.write(data)
        # A camera's local times, two photos a day over three days.
        t = time.mktime((2026, 11, 27 + i // 4, 9 + i % 4, 0, 2 * i, 0, 0, -1))
        os.utime(p, (t, t))
        files[name] = hashlib.sha256(data).hexdigest()
    return files


def one_round(ferry, rnd, layout, delete_after, kills, rate, photos, work):
    card_dir = os.path.join(work, "card")
    dest = os.path.join(work, "dest")
    card_files = make_card(card_dir, rnd, photos)
    # Older, different photos with the same names and sizes already in DEST
    # (tree layout: where the new ones would go).
    os.makedirs(os.path.join(dest, "100CANON"))
    older = {}
    for name in rnd.sample(sorted(card_files), k=max(1, photos // 4)):
        size = os.path.getsize(os.path.join(card_dir, "DCIM", "100CANON", name))
        p = os.path.join(dest, "100CANON", name)
        with open(p, "wb") as f:
            f.write(rnd.randbytes(size))
        older[p] = sha(p)
    card = Card(ferry, card_dir, rate)
    args = [ferry, "sync", card.base + "/DCIM", dest, "--quiet"]
    if layout == "date":
        args += ["--layout", "date"]
    if delete_after:
        args += ["--delete-after"]
    killed = 0
    try:
        for _ in range(kills):
            p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rnd.uniform(0.05, 1.5))
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                killed += 1
            p.wait()
        final = subprocess.run(args, capture_output=True, text=True, timeout=600)
        again = subprocess.run([a for a in args if a != "--quiet"] + ["--json"], capture_output=True, text=True,
                               timeout=600)
    finally:
        card.stop()
    problems = []
    if final.returncode != 0:
        problems.append(f"final run exit {final.returncode}: {final.stderr.strip()[-300:]}")
    if again.returncode != 0:
        problems.append(f"run after the final one exit {again.returncode}: {again.stderr.strip()[-300:]}")
    else:
        summary = json.loads(again.stdout.strip().splitlines()[-1])
        if summary.get("imported") or summary.get("recorded"):
            problems.append(f"the run after the final one imported {summary['imported']}, recorded {summary['recorded']}")
    local = tree(dest)
    leftovers = [r for r in local if r.endswith(".part") or r.endswith(".part.journal")]
    if leftovers:
        problems.append(f"left behind: {leftovers}")
    local_sums = {}
    for rel, p in local.items():
        if rel.endswith(".part") or rel.endswith(".part.journal"):
            continue
        local_sums.setdefault(sha(p), []).append(rel)
    for p, s in older.items():
        if not os.path.exists(p) or sha(p) != s:
            problems.append(f"an older local file changed or went: {p}")
    on_card = {n: sha(os.path.join(card_dir, "DCIM", "100CANON", n))
               for n in os.listdir(os.path.join(card_dir, "DCIM", "100CANON"))}
    for name, s in card_files.items():
        if name not in on_card and s not in local_sums:
            problems.append(f"LOST: {name} is neither on the card nor in DEST")
        if name in on_card and on_card[name] != s:
            problems.append(f"the card's {name} changed")
        if s not in local_sums:
            problems.append(f"{name} was not imported")
        elif len(local_sums[s]) > 1:
            problems.append(f"{name} imported twice: {local_sums[s]}")
    if not delete_after and len(on_card) != len(card_files):
        problems.append("files went from the card without --delete-after")
    deleted = len(card_files) - len(on_card)
    shutil.rmtree(card_dir)
    shutil.rmtree(dest)
    return killed, deleted, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ferry", help="the ferry binary (default: a debug build of this checkout)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--kills", type=int, default=8)
    ap.add_argument("--photos", type=int, default=12)
    ap.add_argument("--rate", type=int, default=4_000_000, help="the card's bytes per second")
    ap.add_argument("--seed", type=int, default=25)
    args = ap.parse_args()
    ferry = args.ferry
    if not ferry:
        subprocess.run(["swift", "build", "--product", "ferry"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        ferry = os.path.join(ROOT, ".build", "debug", "ferry")
    rnd = random.Random(args.seed)
    failures = 0
    started = time.time()
    for layout in ["tree", "date"]:
        for delete_after in [False, True]:
            kills = deleted = 0
            bad = []
            for r in range(args.rounds):
                work = tempfile.mkdtemp(prefix="ferry-kill-loop-")
                try:
                    k, d, problems = one_round(ferry, rnd, layout, delete_after, args.kills, args.rate, args.photos, work)
                finally:
                    shutil.rmtree(work, ignore_errors=True)
                kills += k
                deleted += d
                bad += [f"round {r + 1}: {p}" for p in problems]
            failures += len(bad)
            label = f"layout {layout}{', delete-after' if delete_after else ''}"
            print(f"{label}: {args.rounds} rounds x {args.photos} photos, {kills} kills, {deleted} deleted from the card, "
                  f"{len(bad)} problems", flush=True)
            for b in bad:
                print("  " + b)
    print(f"{time.time() - started:.0f} s; {'OK' if failures == 0 else f'{failures} problems'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
