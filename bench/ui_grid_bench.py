#!/usr/bin/env python3
"""The page's grid with a full camera folder (issue 28): 10,000 photos in one local folder.

`ferry serve DIR` on a local folder of PHOTOS small JPEGs (copies of one 320x240 JPEG made by ffmpeg, with
distinct names and times spread over 40 days), headless Chromium as a phone (390x844 at 3x,
mobile emulation) or a desktop (1280x800), measuring:

  - listing to first tiles: the listing's arrival to the first frame painted after it
    (the page's own `window.ferry.timings.list`: painted - fetch), median of 3 cold loads;
  - thumbnail requests for the first screen: /api/thumb (and /api/file) requests made in the
    2 s after that paint, without scrolling (resource timing);
  - a scroll at reading speed (20 px a frame for 600 frames): frame time p95, thumbnail
    requests made on the way, the most DOM nodes;
  - scrolling top to bottom (window.scrollBy each frame, at least 250 px a frame, the whole
    folder in at most about 1,200 frames, at most 40 s): the most DOM nodes at any frame, and
    the frame times (requestAnimationFrame intervals) at the median, 95th percentile and worst;
  - the JS heap (CDP Runtime.getHeapUsage) after the scroll, and the most seen during it.

Usage: bench/ui_grid_bench.py [--photos 10000] [--ferry PATH] [--web DIR] [--label NAME]
       [--viewport phone|desktop] [--json]
--web DIR serves another version of the page (e.g. today's, from `git show`): the binary is
linked into a temporary PREFIX/bin beside PREFIX/share/ferry/Web, which `ferry serve` prefers.
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, ferry_binary

os.environ.setdefault("SE_OFFLINE", "true")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

VIEWPORTS = {"phone": (390, 844, 3, True), "desktop": (1280, 800, 1, False)}


def make_photos(folder, count):
    os.makedirs(folder, exist_ok=True)
    sample = os.path.join(folder, ".sample.jpg")
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc=size=320x240", "-frames:v", "1", "-q:v", "5", sample], check=True)
    with open(sample, "rb") as f:
        body = f.read()
    os.remove(sample)
    start = time.mktime((2024, 5, 1, 8, 0, 0, 0, 0, -1))
    for i in range(count):
        path = os.path.join(folder, f"IMG_{i + 1:05d}.JPG")
        with open(path, "wb") as f:
            f.write(body)
        # 250 photos a day over 40 days, a few seconds apart.
        t = start + (i // 250) * 86400 + (i % 250) * 7
        os.utime(path, (t, t))
    return len(body)


def serve(ferry, folder, cache, web=None):
    binary = ferry
    if web:
        prefix = os.path.join(os.path.dirname(cache), "prefix")
        os.makedirs(os.path.join(prefix, "bin"))
        os.makedirs(os.path.join(prefix, "share", "ferry"))
        shutil.copytree(web, os.path.join(prefix, "share", "ferry", "Web"))
        binary = os.path.join(prefix, "bin", "ferry")
        try:
            os.link(ferry, binary)
        except OSError:
            shutil.copy2(ferry, binary)
    proc = subprocess.Popen([binary, "serve", folder, "--port", "0", "--cache", cache],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    m = re.search(r"open (http://\S+)", line)
    if not m:
        proc.terminate()
        raise RuntimeError(f"ferry serve did not start: {line}")
    return proc, m.group(1)


def browser(viewport):
    w, h, scale, mobile = VIEWPORTS[viewport]
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              f"--window-size={w},{h}", "--disable-extensions", "--no-first-run"):
        o.add_argument(a)
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    d.set_page_load_timeout(120)
    d.set_script_timeout(120)
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": w, "height": h, "deviceScaleFactor": scale, "mobile": mobile})
    return d


def wait(d, script, timeout=60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = d.execute_script(script)
        if value:
            return value
        time.sleep(0.02)
    raise RuntimeError(f"timed out: {script}")


SCROLL = """
const done = arguments[arguments.length - 1];
const gentle = arguments[0];
const times = [];
let maxNodes = 0, frames = 0, last = performance.now();
const started = last;
const height = () => document.documentElement.scrollHeight - innerHeight;
const step = gentle ? 20 : Math.max(250, height() / 1200);
function frame(now) {
  times.push(now - last); last = now; frames++;
  maxNodes = Math.max(maxNodes, document.getElementsByTagName('*').length);
  if (scrollY >= height() - 1 || now - started > 40000 || (gentle && frames >= 600)) {
    done({ times, maxNodes, frames, reached: scrollY >= height() - 1, height: height(), step });
    return;
  }
  scrollBy(0, step);
  requestAnimationFrame(frame);
}
requestAnimationFrame((now) => { last = now; requestAnimationFrame(frame); });
"""


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def measure(d, url, count):
    target = url + ("&" if "?" in url else "?") + "path=%2F"
    firsts = []
    requests = None
    for attempt in range(3):
        d.execute_cdp_cmd("Network.enable", {})
        d.execute_cdp_cmd("Network.clearBrowserCache", {})
        d.get(target)
        wait(d, f"return window.ferry && window.ferry.timings.list && window.ferry.timings.list.count === {count}"
                " && window.ferry.timings.list.painted")
        t = d.execute_script("return window.ferry.timings.list")
        firsts.append(t["painted"] - t["fetch"])
        if attempt == 0:
            time.sleep(2)
            requests = d.execute_script(
                "return performance.getEntriesByType('resource').filter(e => /\\/api\\/(thumb|file)\\?/.test(e.name)).length")
    nodes_at_rest = d.execute_script("return document.getElementsByTagName('*').length")
    heap_before = d.execute_cdp_cmd("Runtime.getHeapUsage", {})["usedSize"]
    # Reading speed first (20 px a frame, 1,200 px/s, 10 s): thumbnails load as the rows come.
    d.execute_script("performance.setResourceTimingBufferSize(1000000)")  # 250 by default
    before = d.execute_script(
        "return performance.getEntriesByType('resource').filter(e => /\\/api\\/(thumb|file)\\?/.test(e.name)).length")
    gentle = d.execute_async_script(SCROLL, True)
    gentle_requests = d.execute_script(
        "return performance.getEntriesByType('resource').filter(e => /\\/api\\/(thumb|file)\\?/.test(e.name)).length") - before
    gentle_times = gentle["times"][1:]
    d.execute_script("window.scrollTo(0, 0)")
    time.sleep(1)
    scroll = d.execute_async_script(SCROLL, False)
    times = scroll["times"][1:]
    d.execute_cdp_cmd("HeapProfiler.collectGarbage", {})
    heap_after = d.execute_cdp_cmd("Runtime.getHeapUsage", {})["usedSize"]
    return {
        "listing to first tiles painted, ms (median of 3 cold loads)": round(statistics.median(firsts)),
        "thumbnail requests for the first screen (2 s, no scroll)": requests,
        "DOM nodes at rest": nodes_at_rest,
        "max DOM nodes while scrolling top to bottom": scroll["maxNodes"],
        "reached the bottom": scroll["reached"],
        "scrolled px / frames / px per frame": f"{round(scroll['height'])} / {scroll['frames']} / {round(scroll['step'])}",
        "frame time median, ms": round(statistics.median(times), 1),
        "frame time p95, ms": round(percentile(times, 95), 1),
        "frame time worst, ms": round(max(times), 1),
        "reading-speed scroll (20 px a frame, 600 frames): frame time p95, ms": round(percentile(gentle_times, 95), 1),
        "reading-speed scroll: thumbnail requests": gentle_requests,
        "reading-speed scroll: max DOM nodes": gentle["maxNodes"],
        "JS heap at first screen, MB": round(heap_before / 1e6, 1),
        "JS heap after scrolling (after GC), MB": round(heap_after / 1e6, 1),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--photos", type=int, default=10000)
    p.add_argument("--ferry", default=None)
    p.add_argument("--web", default=None)
    p.add_argument("--label", default="this page")
    p.add_argument("--viewport", default="phone", choices=sorted(VIEWPORTS))
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    ferry = args.ferry or ferry_binary()
    work = tempfile.mkdtemp(prefix="ui-grid-bench-")
    try:
        folder = os.path.join(work, "photos")
        started = time.monotonic()
        size = make_photos(folder, args.photos)
        print(f"{args.photos} photos of {size} bytes in {time.monotonic() - started:.1f} s", file=sys.stderr)
        proc, url = serve(ferry, folder, os.path.join(work, "cache"), args.web)  # its prefix in `work` too
        d = browser(args.viewport)
        try:
            figures = measure(d, url, args.photos)
        finally:
            d.quit()
            proc.terminate()
            proc.wait()
        if args.json:
            print(json.dumps({"label": args.label, "viewport": args.viewport, **figures}))
        else:
            print(f"{args.label} ({args.viewport}, {args.photos} photos)")
            for k, v in figures.items():
                print(f"  {k}: {v}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
