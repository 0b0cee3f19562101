#!/usr/bin/env python3
"""Photos stand up in the page: headless Chromium against `ferry serve` on `ferry card`.

Run by Tests/FerryWebTests/BrowserTests.swift (portraitPhotosStandUpInChromium), which writes
DCIM/100FERRY/IMG_000N.JPG for N in 1...8: 1600x1200 landscape pixels with a red block in the
stored top-left corner and a green one in the stored top-right, an Exif thumbnail of the same
pixels, and Exif orientation N (set with exiftool). It passes:

    test_orientation.py --url URL --artifacts DIR

Checks, for all eight: Chromium's own rendering of the original (image-orientation: from-image)
puts the blocks where the Exif table says (so the table the Swift tests use is Chromium's too);
the grid's tiles (the card's Exif thumbnails, turned by the server) match it; the viewer shows
IMG_0006.JPG (a portrait shot, "rotate 90 CW") upright and tall, and keeps the size as shown when
the zoom switches to the original. Screenshots of the grid and the viewer at 1280x800 and 390x844.
Prints one line per check and "N passed, N failed"; exits 1 when a check failed.
"""

import argparse
import sys

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

from test_ui import UI, checker, expect  # noqa: E402

# Where the red (stored top-left) and green (stored top-right) blocks are shown, by orientation.
EXPECTED = {
    1: ("topLeft", "topRight"), 2: ("topRight", "topLeft"), 3: ("bottomRight", "bottomLeft"),
    4: ("bottomLeft", "bottomRight"), 5: ("topLeft", "bottomLeft"), 6: ("topRight", "bottomRight"),
    7: ("bottomRight", "topRight"), 8: ("bottomLeft", "topLeft"),
}

# Draws an image element (as Chromium shows it) on a canvas and names the corners holding red and
# green; also its natural size.
CORNERS_JS = """
const img = arguments[0];
const w = img.naturalWidth, h = img.naturalHeight;
const c = document.createElement('canvas');
c.width = w; c.height = h;
const g = c.getContext('2d');
g.drawImage(img, 0, 0);
const at = {topLeft: [w / 10, h / 10], topRight: [w - 1 - w / 10, h / 10],
            bottomLeft: [w / 10, h - 1 - h / 10], bottomRight: [w - 1 - w / 10, h - 1 - h / 10]};
const red = [], green = [];
for (const [name, [x, y]] of Object.entries(at)) {
  const [r, gr, b] = g.getImageData(Math.floor(x), Math.floor(y), 1, 1).data;
  if (r > 170 && gr < 90 && b < 90) red.push(name);
  if (gr > 150 && r < 90 && b < 90) green.push(name);
}
return {red, green, w, h};
"""

LOAD_JS = """
const done = arguments[arguments.length - 1];
const img = new Image();
img.onload = () => done(true);
img.onerror = () => done(false);
img.id = 'probe-' + arguments[1];
img.style.display = 'none';
document.body.append(img);
img.src = arguments[0];
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--artifacts", required=True)
    args = parser.parse_args()
    ui = UI(args.url, args.artifacts)
    results = []
    check = checker(ui, results, prefix="orientation-")
    folder = "/DCIM/100FERRY"
    names = [f"IMG_000{n}.JPG" for n in range(1, 9)]

    def corners(img):
        return ui.driver.execute_script(CORNERS_JS, img)

    @check("Chromium shows each original where the Exif table says")
    def _():
        ui.go(folder)
        ui.driver.set_script_timeout(30)
        for n, name in enumerate(names, start=1):
            loaded = ui.driver.execute_async_script(LOAD_JS, f"/api/file?path={folder}/{name}", n)
            expect(loaded, f"{name} did not load")
            got = corners(ui.driver.find_element(By.ID, f"probe-{n}"))
            want = EXPECTED[n]
            expect(got["red"] == [want[0]] and got["green"] == [want[1]], f"original {n}: {got}, want {want}")
            expect((got["h"] > got["w"]) == (n >= 5), f"original {n} size {got['w']}x{got['h']}")

    @check("grid: every tile upright (the card's Exif thumbnails, turned)")
    def _():
        ui.go(folder)

        def tiles():
            return {e.get_attribute("data-name"): e.find_element(By.CSS_SELECTOR, ".thumb img")
                    for e in ui.entries() if e.find_elements(By.CSS_SELECTOR, ".thumb img")}
        ui.wait(lambda: len(tiles()) == 8 and all(
            ui.driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", i)
            for i in tiles().values()), "eight thumbnails", 30)
        for n, name in enumerate(names, start=1):
            got = corners(tiles()[name])
            want = EXPECTED[n]
            expect(got["red"] == [want[0]] and got["green"] == [want[1]], f"tile {n}: {got}, want {want}")
            expect(max(got["w"], got["h"]) == 160, f"tile {n} is the card's thumbnail: {got['w']}x{got['h']}")
            expect((got["h"] > got["w"]) == (n >= 5), f"tile {n} size {got['w']}x{got['h']}")

    @check("viewer: a portrait shot stands up, sized as shown, also at the original")
    def _():
        ui.go(folder)
        ui.open_image("IMG_0006.JPG")
        ui.wait_loaded("IMG_0006.JPG", timeout=20)
        expect(ui.attr("data-level") == "preview", f"level {ui.attr('data-level')}")
        size = (ui.attr("data-image-width"), ui.attr("data-image-height"))
        expect(size == ("1200", "1600"), f"the size as shown: {size}")
        image = ui.testid("viewer-image")
        got = corners(image)
        expect(got["red"] == ["topRight"] and got["green"] == ["bottomRight"], f"preview {got}")
        expect(got["h"] > got["w"], f"preview {got['w']}x{got['h']}")
        box = ui.driver.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.width, r.height]",
                                       image)
        stage = ui.driver.execute_script(
            "const r = document.getElementById('stage').getBoundingClientRect(); return [r.width, r.height]")
        expect(box[1] > box[0] and abs(box[1] - stage[1]) < 2, f"fitted tall: {box} in {stage}")
        # 100%: more pixels than the preview has, so the original comes (Chromium turns it itself).
        ActionChains(ui.driver).double_click(ui.driver.find_element(By.ID, "stage")).perform()
        ui.wait(lambda: abs(ui.zoom() - 1) < 1e-3, "double-click to 100%")
        ui.wait(lambda: ui.attr("data-level") == "original", "the original", 20)
        got = corners(image)
        expect(got["red"] == ["topRight"] and got["green"] == ["bottomRight"], f"original {got}")
        expect((got["w"], got["h"]) == (1200, 1600), f"original {got['w']}x{got['h']}")
        size = (ui.attr("data-image-width"), ui.attr("data-image-height"))
        expect(size == ("1200", "1600"), f"the size as shown at the original: {size}")
        box = ui.driver.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.width, r.height]",
                                       image)
        expect(abs(box[0] - 1200) < 2 and abs(box[1] - 1600) < 2, f"100% of the original: {box}")
        ui.keys(Keys.ESCAPE)
        ui.wait(lambda: not ui.viewer_open(), "the viewer closed")

    @check("screenshots: grid and viewer at 1280x800 and 390x844")
    def _():
        for w, h, kind in ((1280, 800, "desktop"), (390, 844, "phone")):
            ui.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                      {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 600})
            ui.go(folder)
            ui.wait(lambda: all(ui.driver.execute_script(
                "return [...document.querySelectorAll('.entry .thumb img')].every(i => i.complete && i.naturalWidth)")
                for _ in [0]), "thumbnails", 30)
            ui.screenshot(f"orientation-{kind}-grid.png")
            ui.open_image("IMG_0006.JPG")
            ui.wait_loaded("IMG_0006.JPG", timeout=20)
            image = ui.testid("viewer-image")
            box = ui.driver.execute_script(
                "const r = arguments[0].getBoundingClientRect(); return [r.width, r.height]", image)
            expect(box[1] > box[0], f"{kind}: the viewer's image is tall: {box}")
            ui.screenshot(f"orientation-{kind}-viewer.png")
            ui.keys(Keys.ESCAPE)
            ui.wait(lambda: not ui.viewer_open(), "the viewer closed")
        ui.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    ui.driver.quit()
    failed = [name for name, error in results if error is not None]
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
