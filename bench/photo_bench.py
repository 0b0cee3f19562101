#!/usr/bin/env python3
"""Photo benchmarks of issue 26 ("Photos as cameras and phones make them"), side by
side in one run:

  heic-thumb    /api/thumb of `ferry serve` on a local folder (default side 256, a
                fresh cache each round) of a 12 MP HEIC against the same picture as
                a 12 MP JPEG; target: the HEIC in at most 2x the JPEG's time. The
                HEIC is made by heif-enc from the JPEG, once without a thumbnail item
                and once with a 320 px one (`heif-enc -t 320`, as phones write).
  heic-preview  /api/preview (the viewer's fitted image, default 1280 x 800 -> 1280 px)
                of that HEIC against `heif-convert` to JPEG plus ImageMagick's
                `convert -resize 1280x1280` to the same size; target: no slower.
  cr3-tile      /api/thumb of a CR3 (1620 x 1080 PRVW, 160 x 120 THMB, 25 MB mdat;
                SampleCR3's layout) served by `ferry card --rate 2500000
                --max-connections 1`, through a counting proxy: the bytes the card sent
                for the tile and the time; target: at most 256 KiB.
  heic-remote-tile  /api/thumb of 12 MP HEICs with a 320 px thumbnail item (`heif-enc -t 320`)
                served by `ferry card --rate 2500000 --max-connections 1` through the
                counting proxy: as phones lay them out (`meta` first: the `meta` box
                and the thumbnail item by range) against the same bytes with `meta`
                moved behind `mdat` (ftyp, free of meta's size, mdat, meta: item
                offsets unchanged), which Ferry downloads whole before the tile, as
                every remote HEIC was before the range read; bytes sent and time.
  sync-date     `ferry sync --layout date` of a folder of 500 JPEGs whose
                DateTimeOriginal exiftool set: today's build against the build before
                sync read the date taken (--before PATH, 540c2ac^) and today's build
                with `--layout tree`; target: within 5% of the build before.

Usage: bench/photo_bench.py [--only heic-thumb,heic-preview,heic-remote-tile,cr3-tile,sync-date]
         [--rounds N] [--jobs N] [--files N] [--photos N] [--photo-size WxH] [--ferry PATH] [--before PATH] [--out FILE]
Needs ImageMagick (scripts/setup.sh --bench), heif-enc/heif-convert and exiftool
(scripts/setup.sh).
"""
import argparse, os, shutil, socket, struct, subprocess, sys, tempfile, threading, time, urllib.request
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import FreshExt4, alternate, ferry_binary, free_port, median, wait_port
from thumbnail_bench import CONVERT, make_photos


def get(url):
    start = time.perf_counter()
    with urllib.request.urlopen(url) as r:
        data = r.read()
    elapsed = time.perf_counter() - start
    assert data[:2] == b"\xff\xd8", f"{url}: not a JPEG"
    return elapsed, data


class Serve:
    """`ferry serve SOURCE` with a fresh cache folder (a cold cache)."""

    def __init__(self, ferry, source, work):
        self.cache = tempfile.mkdtemp(prefix="cache-", dir=work)
        self.port = free_port()
        self.proc = subprocess.Popen([ferry, "serve", source, "--port", str(self.port), "--cache", self.cache],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.cache, ignore_errors=True)


# --- HEIC -------------------------------------------------------------------------------

def make_heics(jpegs, thumb):
    """The same pictures as HEIC (heif-enc's default quality), with a thumbnail item of
    at most `thumb` pixels when given."""
    out = []
    for path in jpegs:
        stem = os.path.splitext(path)[0]
        heic = f"{stem}{'_T' if thumb else ''}.HEIC"
        subprocess.run(["heif-enc"] + (["-t", str(thumb)] if thumb else []) + ["-o", heic, path], check=True,
                       stdout=subprocess.DEVNULL)
        out.append(heic)
    return out


class HEICSamples:
    """12 MP JPEGs (thumbnail_bench's photo-like pictures, about 5 MB each) and the same
    pictures as HEIC by heif-enc (its defaults: quality 50, x265's preset), without and
    with a 320 px thumbnail item; made once, shared by both HEIC cases."""

    def __init__(self, work, files, thumbed=None):
        self.folder = os.path.join(work, "photos")
        self._plain, self._thumbed = None, thumbed
        # Ready-made HEICs (--thumbed) serve heic-remote-tile alone: no JPEGs made.
        self.jpegs = [] if thumbed else make_photos(self.folder, files)

    @property
    def plain(self):
        if self._plain is None:
            self._plain = make_heics(self.jpegs, 0)
        return self._plain

    @property
    def thumbed(self):
        if self._thumbed is None:
            self._thumbed = make_heics(self.jpegs, 320)
        return self._thumbed


def heic_thumb(ferry, work, samples, rounds):
    groups = {"12 MP JPEG": samples.jpegs, "12 MP HEIC (no thumbnail item)": samples.plain,
              "12 MP HEIC with a 320 px thumbnail item": samples.thumbed}
    runs = {name: [] for name in groups}
    names = list(groups)
    for r in range(rounds):
        server = Serve(ferry, samples.folder, work)
        try:
            for name in names[r % len(names):] + names[:r % len(names)]:
                for path in groups[name]:
                    runs[name].append(get(server.url(f"/api/thumb?path=/{os.path.basename(path)}"))[0])
        finally:
            server.stop()
    sizes = {name: sum(os.path.getsize(p) for p in paths) / len(paths) for name, paths in groups.items()}
    base = median(runs["12 MP JPEG"])
    lines = [f"## HEIC thumbnails (`/api/thumb`, 256 px, cold cache; {len(samples.jpegs)} pictures, {rounds} rounds, "
             "median per image)", "", "| photo | size | ms per image | ratio to the JPEG |", "|---|---|---|---|"]
    for name, times in runs.items():
        m = median(times)
        lines.append(f"| {name} | {sizes[name] / 1e6:.1f} MB | {m * 1000:.1f} | {m / base:.2f}x |")
    lines += ["", "Target: a HEIC in at most 2x the JPEG's time."]
    return lines


def heic_preview(ferry, work, samples, rounds):
    heics = samples.plain
    runs = {"ferry serve /api/preview": [], "heif-convert + convert -resize 1280x1280": []}
    out = os.path.join(work, "out.jpg")
    small = os.path.join(work, "small.jpg")
    sizes = set()
    for r in range(rounds):
        order = list(runs) if r % 2 == 0 else list(reversed(runs))
        for name in order:
            if name.startswith("ferry"):
                server = Serve(ferry, samples.folder, work)
                try:
                    for path in heics:
                        elapsed, data = get(server.url(f"/api/preview?path=/{os.path.basename(path)}"))
                        runs[name].append(elapsed)
                        sizes.add(("ferry", jpeg_size(data)))
                finally:
                    server.stop()
            else:
                for path in heics:
                    start = time.perf_counter()
                    subprocess.run(["heif-convert", "-q", "90", path, out], check=True, stdout=subprocess.DEVNULL)
                    subprocess.run([CONVERT, out, "-resize", "1280x1280", "-quality", "85", small], check=True)
                    runs[name].append(time.perf_counter() - start)
                    with open(small, "rb") as f:
                        sizes.add(("convert", jpeg_size(f.read())))
    base = median(runs["ferry serve /api/preview"])
    lines = [f"## HEIC previews (`/api/preview`, default 1280 x 800 window; {len(heics)} pictures, {rounds} rounds, "
             "median per image)", "", "| tool | ms per image | ratio to ferry |", "|---|---|---|"]
    for name, times in runs.items():
        m = median(times)
        lines.append(f"| {name} | {m * 1000:.1f} | {m / base:.2f}x |")
    lines += ["", f"Output sizes: {', '.join(f'{t} {w}x{h}' for t, (w, h) in sorted(sizes))}. "
              "Target: ferry no slower than the pair (JPEG quality 85 both)."]
    return lines


def jpeg_size(data):
    """(width, height) from a JPEG's SOF marker."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return (w, h)
        i += 2 + length
    return None


# --- CR3 --------------------------------------------------------------------------------

CANON_UUID = "85c0b687820f11e08111f4ce462b6a48"
PREVIEW_UUID = "eaf42b5e1c984b88b9fbb7dc406e4d16"
XMP_UUID = "be7acfcb97a942e89c71999491e3afac"


def box(kind, payload):
    return struct.pack(">I", 8 + len(payload)) + kind.encode() + payload


def uuid_box(uuid, payload):
    return box("uuid", bytes.fromhex(uuid) + payload)


def tiff(tags):
    """A little-endian TIFF with one IFD: tags are (tag, type, count, value bytes)."""
    tags = sorted(tags)
    data = b""
    start = 8 + 2 + 12 * len(tags) + 4
    entries = b""
    for tag, kind, count, value in tags:
        if len(value) <= 4:
            entries += struct.pack("<HHI", tag, kind, count) + value.ljust(4, b"\0")
        else:
            entries += struct.pack("<HHII", tag, kind, count, start + len(data))
            data += value + (b"\0" if len(value) % 2 else b"")
    return b"II*\0" + struct.pack("<IH", 8, len(tags)) + entries + b"\0\0\0\0" + data


def ascii_tag(tag, text):
    value = text.encode() + b"\0"
    return (tag, 2, len(value), value)


def make_cr3(thumbnail, preview, sensor_bytes, taken="2024:06:01 23:45:12", padding=30_000):
    """A CR3 file to the layout Canon's cameras write, as Sources/FerryTestSupport/SampleCR3.swift
    builds it (see that file and Sources/FerryKit/Imaging/CR3.swift for the boxes)."""
    ftyp = box("ftyp", b"crx " + struct.pack(">I", 1) + b"crx isom")
    cncv = box("CNCV", b"CanonCR3_001/00.10.00/00.00.00")
    cctp = box("CCTP", struct.pack(">III", 0, 1, 3) + b"".join(
        box("CCDT", struct.pack(">QII", t, 0, i)) for t, i in [(2, 1), (1, 2), (0, 3)]))
    cmt1 = box("CMT1", tiff([ascii_tag(0x010F, "Canon"), ascii_tag(0x0110, "Canon EOS R6"),
                             (0x0112, 3, 1, struct.pack("<H", 1)), ascii_tag(0x0132, taken)]))
    cmt2 = box("CMT2", tiff([ascii_tag(0x9003, taken), ascii_tag(0x9004, taken),
                             (0xA002, 3, 1, struct.pack("<H", 6000)), (0xA003, 3, 1, struct.pack("<H", 4000))]))
    cmt3 = box("CMT3", tiff([(0x0010, 4, 1, struct.pack("<I", 0x80000453))]))
    cmt4 = box("CMT4", tiff([(0x0000, 7, 4, bytes([2, 3, 0, 0]))]))
    payload = b"\0\0\0\0" + struct.pack(">HHIHH", 160, 120, len(thumbnail), 1, 0) + thumbnail
    thmb = box("THMB", payload + b"\0" * (-len(payload) % 4))
    free = box("free", b"\0" * padding)
    mvhd = struct.pack(">IIIII", 0, 0, 0, 1000, 1) + struct.pack(">IH", 0x00010000, 0x0100) + b"\0" * 10
    mvhd += b"".join(struct.pack(">I", v) for v in [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000])
    mvhd += b"\0" * 24 + struct.pack(">I", 2)
    xmp = uuid_box(XMP_UUID, b"<?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?><x:xmpmeta xmlns:x='adobe:ns:meta/'>"
                   b"</x:xmpmeta><?xpacket end='w'?>")
    payload = struct.pack(">IHHHH", 0, 1, 1620, 1080, 1) + struct.pack(">I", len(preview)) + preview
    prvw = uuid_box(PREVIEW_UUID, struct.pack(">II", 0, 1) + box("PRVW", payload + b"\0" * (-len(payload) % 4)))
    # Sensor data that does not compress (a card or proxy cannot shortcut it).
    mdat = box("mdat", os.urandom(sensor_bytes))

    def ctbo(records):
        return box("CTBO", struct.pack(">I", 4) + b"".join(
            struct.pack(">IQQ", i + 1, at, size) for i, (at, size) in enumerate(records)))

    canon_size = 8 + 16 + len(cncv) + len(cctp) + len(ctbo([(0, 0)] * 4)) + len(free) + len(cmt1) + len(cmt2) \
        + len(cmt3) + len(cmt4) + len(thmb)
    moov_size = 8 + canon_size + 8 + len(mvhd)
    xmp_at = len(ftyp) + moov_size
    prvw_at = xmp_at + len(xmp)
    mdat_at = prvw_at + len(prvw)
    table = ctbo([(xmp_at, len(xmp)), (prvw_at, len(prvw)), (mdat_at, len(mdat)), (0, 0)])
    canon = uuid_box(CANON_UUID, cncv + cctp + table + free + cmt1 + cmt2 + cmt3 + cmt4 + thmb)
    moov = box("moov", canon + box("mvhd", mvhd))
    assert len(moov) == moov_size, "CR3 sample layout"
    return ftyp + moov + xmp + prvw + mdat


class CountingProxy:
    """A TCP relay on loopback that counts the bytes the upstream (the card) sends."""

    def __init__(self, upstream_port):
        self.upstream = upstream_port
        self.sent = 0
        self.connections = 0
        self.lock = threading.Lock()
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while self.running:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream))
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._pipe, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, True), daemon=True).start()

    def _pipe(self, src, dst, count):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if count:
                    with self.lock:
                        self.sent += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def take(self):
        with self.lock:
            sent, self.sent = self.sent, 0
            connections, self.connections = self.connections, 0
        return sent, connections

    def stop(self):
        self.running = False
        self.listener.close()


def cr3_tile(ferry, work, rounds):
    card_dir = os.path.join(work, "card", "DCIM", "100CANON")
    os.makedirs(card_dir)
    thumb = os.path.join(work, "thmb.jpg")
    preview = os.path.join(work, "prvw.jpg")
    for path, size in [(thumb, "160x120"), (preview, "1620x1080")]:
        subprocess.run([CONVERT, "-size", size, "gradient:#204080-#f0c060", "-attenuate", "0.4", "+noise",
                        "Gaussian", "-quality", "90", path], check=True)
    data = make_cr3(open(thumb, "rb").read(), open(preview, "rb").read(), 25_000_000)
    names = [f"IMG_{i:04d}.CR3" for i in range(1, rounds + 1)]
    for name in names:
        with open(os.path.join(card_dir, name), "wb") as f:
            f.write(data)
    card_port = free_port()
    card = subprocess.Popen([ferry, "card", os.path.join(work, "card"), "--port", str(card_port), "--rate", "2500000",
                             "--max-connections", "1", "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proxy = None
    rows = []
    try:
        wait_port(card_port)
        proxy = CountingProxy(card_port)
        # One server for all rounds, a different photo each round: every tile is a cold one.
        server = Serve(ferry, f"flashair://127.0.0.1:{proxy.port}/", work)
        try:
            time.sleep(1)
            get_json(server.url("/api/list?path=/DCIM/100CANON"))
            time.sleep(0.5)
            listing = proxy.take()
            for name in names:
                elapsed, jpeg = get(server.url(f"/api/thumb?path=/DCIM/100CANON/{name}"))
                time.sleep(0.3)  # let the relay count the last bytes
                sent, connections = proxy.take()
                rows.append((elapsed, sent, connections, jpeg_size(jpeg)))
        finally:
            server.stop()
    finally:
        if proxy:
            proxy.stop()
        card.terminate()
        card.wait()
    times = [r[0] for r in rows]
    sent = [r[1] for r in rows]
    lines = [f"## CR3 tiles from a 2.5 MB/s one-connection card ({len(data) / 1e6:.1f} MB CR3: 1620 x 1080 PRVW "
             f"of {os.path.getsize(preview) // 1024} KiB, 160 x 120 THMB, 25 MB mdat; {rounds} photos, "
             "each a cold tile)", "",
             "| what | median | all |", "|---|---|---|",
             f"| time of `/api/thumb` | {median(times) * 1000:.0f} ms | "
             f"{', '.join(f'{t * 1000:.0f}' for t in times)} ms |",
             f"| bytes the card sent for the tile (headers included) | {median(sent) / 1024:.1f} KiB | "
             f"{', '.join(str(s) for s in sent)} |",
             f"| connections to the card for the tile | {median([r[2] for r in rows])} | |",
             "", f"The listing before the tiles: {listing[0]} bytes. Tile sizes: {sorted(set(str(r[3]) for r in rows))}. "
             "Target: at most 256 KiB (262,144 bytes) a tile."]
    return lines


def meta_last(data):
    """The same HEIC with its meta box moved behind mdat: ftyp, a free box as long as meta
    (so every item keeps its offset), the rest, meta. libheif reads it; Ferry's range read
    does not look behind mdat and downloads it whole."""
    ftyp_end = struct.unpack(">I", data[0:4])[0]
    meta_size = struct.unpack(">I", data[ftyp_end:ftyp_end + 4])[0]
    assert data[ftyp_end + 4:ftyp_end + 8] == b"meta", "meta does not follow ftyp"
    meta = data[ftyp_end:ftyp_end + meta_size]
    free = struct.pack(">I", meta_size) + b"free" + bytes(meta_size - 8)
    return data[:ftyp_end] + free + data[ftyp_end + meta_size:] + meta


def heic_remote_tile(ferry, work, samples, rounds):
    card_dir = os.path.join(work, "heic-card", "DCIM", "100APPLE")
    os.makedirs(card_dir)
    names = {"meta first (as phones write): meta box and thumbnail item by range": [],
             "meta behind mdat: downloaded whole first (every remote HEIC before)": []}
    labels = list(names)
    for r in range(rounds):
        for i, path in enumerate(samples.thumbed):
            data = open(path, "rb").read()
            for label, bytes_, suffix in [(labels[0], data, ""), (labels[1], meta_last(data), "L")]:
                name = f"IMG_{r:02d}{i:02d}{suffix}.HEIC"
                with open(os.path.join(card_dir, name), "wb") as f:
                    f.write(bytes_)
                names[label].append(name)
    card_port = free_port()
    card = subprocess.Popen([ferry, "card", os.path.join(work, "heic-card"), "--port", str(card_port), "--rate",
                             "2500000", "--max-connections", "1", "-q"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    proxy = None
    rows = {label: [] for label in labels}
    try:
        wait_port(card_port)
        proxy = CountingProxy(card_port)
        server = Serve(ferry, f"flashair://127.0.0.1:{proxy.port}/", work)
        try:
            time.sleep(1)
            get_json(server.url("/api/list?path=/DCIM/100APPLE"))
            time.sleep(0.5)
            proxy.take()
            # Alternating the two layouts, a different file each time: every tile is a cold one.
            for k in range(len(names[labels[0]])):
                for label in (labels if k % 2 == 0 else list(reversed(labels))):
                    name = names[label][k]
                    elapsed, jpeg = get(server.url(f"/api/thumb?path=/DCIM/100APPLE/{name}"))
                    time.sleep(0.3)  # let the relay count the last bytes
                    sent, connections = proxy.take()
                    rows[label].append((elapsed, sent, connections, jpeg_size(jpeg)))
        finally:
            server.stop()
    finally:
        if proxy:
            proxy.stop()
        card.terminate()
        card.wait()
    size = median([os.path.getsize(p) for p in samples.thumbed])
    lines = [f"## 12 MP HEIC tiles from a 2.5 MB/s one-connection card (`heif-enc -t 320`, {size / 1e6:.1f} MB; "
             f"{len(samples.thumbed)} pictures x {rounds} rounds, each a cold tile)", "",
             "| layout | time of `/api/thumb` (median) | all (ms) | bytes the card sent (median, headers included) "
             "| connections |", "|---|---|---|---|---|"]
    for label in labels:
        r = rows[label]
        lines.append(f"| {label} | {median([x[0] for x in r]) * 1000:.0f} ms | "
                     f"{', '.join(f'{x[0] * 1000:.0f}' for x in r)} | {median([x[1] for x in r]) / 1024:.1f} KiB | "
                     f"{median([x[2] for x in r])} |")
    lines += ["", f"Tile sizes: {sorted(set(str(x[3]) for r in rows.values() for x in r))}."]
    return lines


def get_json(url):
    with urllib.request.urlopen(url) as r:
        return r.read()


# --- sync --layout date -----------------------------------------------------------------

def make_dated_photos(folder, count, size):
    """`count` JPEGs (`size`, e.g. 2000x1500: about 1.3 MB) whose DateTimeOriginal exiftool wrote, as a
    camera does; each copy gets its own date (over 20 days) in the same bytes."""
    os.makedirs(folder)
    base = os.path.join(folder, "base.jpg")
    subprocess.run([CONVERT, "-size", size, "gradient:#306090-#e0b070", "-attenuate", "0.4", "+noise",
                    "Gaussian", "-quality", "90", base], check=True)
    subprocess.run(["exiftool", "-q", "-overwrite_original", "-DateTimeOriginal=2024:06:01 12:00:00",
                    "-CreateDate=2024:06:01 12:00:00", "-Make=Canon", "-Model=Canon EOS R6", base], check=True)
    data = open(base, "rb").read()
    os.unlink(base)
    stamp = b"2024:06:01 12:00:00"
    assert data.count(stamp) >= 2, "exiftool wrote no dates"
    for i in range(count):
        day, second = 1 + i % 20, i % 60
        dated = data.replace(stamp, f"2024:06:{day:02d} 12:{i // 60 % 60:02d}:{second:02d}".encode())
        with open(os.path.join(folder, f"IMG_{i:04d}.JPG"), "wb") as f:
            f.write(dated)
    return sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder))


def sync_date(ferry, before, work, photos, size, rounds, jobs):
    source = os.path.join(work, "dated")
    total = make_dated_photos(source, photos, size)
    fs = FreshExt4(size_gb=max(4, int(total * rounds * 3 / 2**30) + 2))
    extra = ["-j", str(jobs)] if jobs else []
    try:
        tools = {"today, --layout date": [ferry, "sync", source, "out", "--layout", "date"] + extra,
                 "before 540c2ac, --layout date": [before, "sync", source, "out", "--layout", "date"] + extra,
                 "today, --layout tree": [ferry, "sync", source, "out", "--layout", "tree"] + extra}
        counter = [0]

        def prepare(name):
            counter[0] += 1
            path = os.path.join(fs.path, f"run{counter[0]}")
            # Builds before the fix of the staging race (a group's removal of the staging root
            # came between another's mkdir of the root and of its HASH below it: 2-3 of 500
            # photos failed; fixed on main, the root now goes when the pass ends) need a file
            # kept there so that every row completes; the same for every build, so the rows
            # compare alike (the build before the date change ignores it).
            os.makedirs(os.path.join(path, "out", ".ferry-sync-incoming"))
            open(os.path.join(path, "out", ".ferry-sync-incoming", ".keep"), "w").close()
            subprocess.run(["sync"])
            return path

        def check(name, cwd):
            out = os.path.join(cwd, "out")
            files = sum(len([f for f in fs_ if not f.startswith(".")]) for _, _, fs_ in os.walk(out))
            assert os.listdir(os.path.join(out, ".ferry-sync-incoming")) == [".keep"], f"{name}: staging left behind"
            assert files == photos, f"{name}: {files} files of {photos}"
            if name.startswith("today, --layout date"):
                days = [d for d in os.listdir(out) if d.startswith("2024-06-")]
                assert len(days) == 20, f"{name}: filed into {sorted(os.listdir(out))[:5]}..., not by date taken"

        results = alternate(tools, rounds, prepare, check)
    finally:
        fs.close()
    base = median([t for t, _ in results["before 540c2ac, --layout date"]])
    lines = [f"## `ferry sync{' ' + ' '.join(extra) if extra else ''}` of {photos} {size} JPEGs ({total / 1e6:.0f} MB, "
             f"DateTimeOriginal by exiftool) from a local folder into {fs.describe()}; {rounds} rounds alternating, "
             "median", "",
             "| build and layout | seconds (median) | all | peak RSS | ratio to before |", "|---|---|---|---|---|"]
    for name, runs in results.items():
        m = median([t for t, _ in runs])
        lines.append(f"| {name} | {m:.3f} | {', '.join(f'{t:.3f}' for t, _ in runs)} | "
                     f"{median([r for _, r in runs]) / 1024:.1f} MB | {m / base:.3f}x |")
    lines += ["", "Target: today's `--layout date` within 5% of the build before it read the date taken "
              "(that build filed by the file's modification time)."]
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="heic-thumb,heic-preview,heic-remote-tile,cr3-tile,sync-date")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--files", type=int, default=2, help="12 MP pictures for the HEIC cases")
    parser.add_argument("--thumbed", help="heic-remote-tile: ready `heif-enc -t 320` 12 MP HEICs (comma-separated) "
                        "instead of encoding them (slow on a busy machine)")
    parser.add_argument("--photos", type=int, default=500, help="photos for sync-date")
    parser.add_argument("--photo-size", default="2000x1500", help="sync-date: the photos' pixels")
    parser.add_argument("--jobs", type=int, help="sync-date: -j N for every row (default: sync's own)")
    parser.add_argument("--ferry", help="a built ferry (default: build release)")
    parser.add_argument("--before", help="sync-date: ferry built at 540c2ac^ (git worktree add DIR 540c2ac^)")
    parser.add_argument("--out")
    args = parser.parse_args()
    cases = args.only.split(",")
    if "sync-date" in cases and not args.before:
        sys.exit("photo_bench: sync-date needs --before PATH (a ferry built at 540c2ac^)")
    ferry = args.ferry or ferry_binary()
    work = tempfile.mkdtemp(prefix="bench-photos-")
    lines = [f"# Photo benchmarks (issue 26): `{' '.join(['bench/photo_bench.py'] + sys.argv[1:])}`",
             f"load before: {os.getloadavg()[0]:.1f}", ""]
    samples = None
    try:
        for case in cases:
            if case.startswith("heic-") and samples is None:
                ready = args.thumbed.split(",") if args.thumbed and cases == ["heic-remote-tile"] else None
                samples = HEICSamples(work, args.files, ready)
            if case == "heic-thumb":
                lines += heic_thumb(ferry, work, samples, args.rounds)
            elif case == "heic-preview":
                lines += heic_preview(ferry, work, samples, args.rounds)
            elif case == "heic-remote-tile":
                lines += heic_remote_tile(ferry, work, samples, args.rounds)
            elif case == "cr3-tile":
                lines += cr3_tile(ferry, work, args.rounds)
            elif case == "sync-date":
                lines += sync_date(ferry, args.before, work, args.photos, args.photo_size, args.rounds, args.jobs)
            else:
                sys.exit(f"photo_bench: unknown case {case}")
            lines.append("")
            print("\n".join(lines), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines.append(f"load after: {os.getloadavg()[0]:.1f}")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "a") as f:
            f.write(text)


if __name__ == "__main__":
    main()
