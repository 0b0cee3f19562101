#!/usr/bin/env python3
"""Browser tests of importing from `ferry serve`, and of its phone and desktop layouts.

Run by Tests/FerryWebTests/BrowserTests.swift (importAndLayoutsInChromium), which starts
`ferry card --max-connections 1 --latency 30 --rate 2500000` on a folder and `ferry serve`
on that card with --import-to, and passes:

    test_import.py --url URL --card-url flashair://... --root CARD_FOLDER --imported DIR --ferry BIN --artifacts DIR

--card-url is a second `ferry card` on the same folder with the same CID (the same card at
another address: the first allows one connection, which `ferry serve` holds). The card holds DCIM/100FERRY (20 photos of about 1 MB), DCIM/101FERRY (3 photos) and
.hidden.txt at its root. Prints one line per check, the measured figures, and
"N passed, N failed"; exits 1 when a check failed. Screenshots at 1280x800 and 390x844.
"""

import argparse
import filecmp
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

import accessibility  # noqa: E402
from test_ui import UI, checker, expect  # noqa: E402

DESKTOP = (1280, 800)
PHONE = (390, 844)

# Records whether elements were ever shown (a state may last less than a poll).
WATCH = """
window.seen = window.seen || {};
for (const id of ['waiting', 'viewer-progress', 'viewer-preview']) {
  const e = document.getElementById(id);
  new MutationObserver(() => { if (!e.hidden) window.seen[id] = (window.seen[id] || 0) + 1; })
    .observe(e, { attributes: true, attributeFilter: ['hidden', 'src'] });
}
"""


def imported_files(folder):
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.startswith(".") or ".part" in name:
                continue
            out[os.path.relpath(os.path.join(dirpath, name), folder)] = os.path.join(dirpath, name)
    return out


def main():
    parser = argparse.ArgumentParser()
    for name in ("--url", "--card-url", "--root", "--imported", "--ferry", "--artifacts"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    ui = UI(args.url, args.artifacts)
    d = ui.driver
    root = args.root
    figures = {}
    results = []

    def size(w, h):
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                          {"width": w, "height": h, "deviceScaleFactor": 3 if w < 600 else 1, "mobile": w < 600})

    check = checker(ui, results, prefix="import-")

    def panel(attr="data-state"):
        return ui.testid("import-panel").get_attribute(attr)

    def select(name, shift=False):
        ui.select(name, shift)

    def selected():
        return [e.get_attribute("data-name") for e in ui.entries() if "selected" in e.get_attribute("class")]

    def wait_import(state, timeout=60):
        ui.wait(lambda: panel() == state, f"the import to be {state} (it is {panel()})", timeout)

    def same(relative):
        source = os.path.join(root, relative)
        copy = os.path.join(args.imported, relative)
        return os.path.exists(copy) and filecmp.cmp(source, copy, shallow=False)

    def visible_boxes(selector):
        return d.execute_script("""
            const out = [];
            for (const e of document.querySelectorAll(arguments[0])) {
              const r = e.getBoundingClientRect();
              const s = getComputedStyle(e);
              const shown = e.checkVisibility ? e.checkVisibility({ visibilityProperty: true }) : e.offsetParent !== null;
              if (r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && shown)
                out.push([e.id || e.dataset.testid || e.tagName, r.left, r.top, r.right, r.bottom]);
            }
            return out;""", selector)

    def overlaps(boxes):
        bad = []
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                if a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5 and a[2] < b[4] - 0.5 and b[2] < a[4] - 0.5:
                    bad.append((a[0], b[0]))
        return bad

    size(*DESKTOP)

    @check("hidden entries only with Show hidden, remembered; no delete on DCIM")
    def _():
        ui.go()
        names = [e.get_attribute("data-name") for e in ui.entries()]
        expect(names == ["DCIM"], f"root without hidden: {names}")
        ui.select("DCIM")
        expect(not ui.testid("delete-selected").is_enabled(), "delete on DCIM")
        ui.keys(Keys.ESCAPE)
        ui.testid("show-hidden").click()
        ui.wait(lambda: len(ui.entries()) == 2, "the hidden file listed")
        expect(ui.entry(".hidden.txt").get_attribute("data-hidden") == "true", "data-hidden")
        ui.go()
        ui.wait(lambda: len(ui.entries()) == 2, "Show hidden remembered after a reload")
        ui.testid("show-hidden").click()
        ui.wait(lambda: len(ui.entries()) == 1, "hidden again")

    @check("selection: click, shift-click range, select all, Escape")
    def _():
        ui.go("/DCIM/100FERRY")
        d.execute_script(WATCH)
        expect(all(e.get_attribute("data-imported") == "false" for e in ui.entries()), "nothing imported yet")
        ui.testid("select-all").click()
        expect(len(selected()) == 20, f"select all: {len(selected())}")
        expect(ui.testid("import-selected").text == "Import 20 selected", ui.testid("import-selected").text)
        ui.keys(Keys.ESCAPE)
        ui.wait(lambda: not selected(), "Escape clears")
        expect(not ui.testid("selection-bar").is_displayed(), "the selection bar goes")
        select("IMG_0001.JPG")
        select("IMG_0003.JPG", shift=True)
        expect(selected() == ["IMG_0001.JPG", "IMG_0002.JPG", "IMG_0003.JPG"], f"range: {selected()}")
        # In selection mode a click on a tile selects it instead of opening it.
        ui.entry("IMG_0005.JPG").find_element(By.CSS_SELECTOR, ".open").click()
        expect("IMG_0005.JPG" in selected() and not ui.viewer_open(), "tap selects in selection mode")
        select("IMG_0005.JPG")
        expect(len(selected()) == 3, f"unselect: {selected()}")
        # Photo tiles only: no buttons under them.
        expect(not d.find_elements(By.CSS_SELECTOR, '.entries .entry button:not(.open), .entries .entry a'),
               "per-tile buttons")
        ui.screenshot("desktop-selection.png")

    @check("import 3 selected: identical bytes, imported badges, counts that follow (item 5)")
    def _():
        expect(ui.testid("import-selected").text == "Import 3 selected", ui.testid("import-selected").text)
        ui.wait(lambda: ui.testid("import-new").get_attribute("data-count"), "the count of new files")
        new_before = int(ui.testid("import-new").get_attribute("data-count"))
        ui.testid("import-selected").click()
        wait_import("done", 60)
        expect(panel("data-done") == "3" and panel("data-total") == "3", f"{panel('data-done')}/{panel('data-total')}")
        for i in (1, 2, 3):
            expect(same(f"DCIM/100FERRY/IMG_{i:04d}.JPG"), f"IMG_{i:04d}.JPG differs or is missing")
        ui.wait(lambda: ui.entry("IMG_0002.JPG").get_attribute("data-imported") == "true", "imported badge")
        expect(ui.entry("IMG_0004.JPG").get_attribute("data-imported") == "false", "IMG_0004 not imported")
        expect(ui.entry("IMG_0001.JPG").find_elements(By.CSS_SELECTOR, '[data-testid="imported-badge"]'), "badge shown")
        # "Import all new (N, SIZE)" follows without a reload, as /api/new does.
        ui.wait(lambda: ui.testid("import-new").get_attribute("data-count") == str(new_before - 3),
                f"Import all new to drop from {new_before} by 3: {ui.testid('import-new').text}", 10)
        # The page counts this folder's photos and videos ("Import new here"), as /api/new does when asked so.
        answer = d.execute_script("return fetch('/api/new?kinds=media&folder=' + encodeURIComponent("
                                  "new URLSearchParams(location.search).get('path') || '/')).then(r => r.json())")
        expect(answer["count"] == new_before - 3, f"/api/new says {answer}")
        # The selection bar counts what is imported among the selected.
        select("IMG_0001.JPG")
        select("IMG_0004.JPG")
        expect("1 imported" in ui.testid("selection-count").text, ui.testid("selection-count").text)
        ui.keys(Keys.ESCAPE)

    @check("import options: this folder or the whole card, photos and videos or extensions, the full destination")
    def _():
        ui.go("/DCIM/100FERRY")
        button = ui.testid("import-new")
        ui.wait(lambda: button.get_attribute("data-count"), "the count of new files")
        here = int(button.get_attribute("data-count"))
        expect("new here" in button.text, f"in a folder it counts that folder: {button.text!r}")
        d.execute_script("document.getElementById('import-options').open = true")
        expect(ui.testid("import-destination").get_attribute("value") == os.path.abspath(args.imported),
               f"destination shown: {ui.testid('import-destination').get_attribute('value')!r}")
        scope = ui.testid("import-scope")
        expect("whole card" in scope.text, f"a card's scope is named so: {scope.text!r}")
        # The server was given two --import-to folders: the page chooses among them (and only them).
        choice = ui.testid("import-destination-choice")
        archive = os.path.join(os.path.dirname(os.path.abspath(args.imported)), "archive")
        offered = [o.get_attribute("value") for o in Select(choice).options]
        expect(choice.is_displayed() and offered == [os.path.abspath(args.imported), archive],
               f"the folders offered: {offered}")
        Select(choice).select_by_value(archive)
        ui.wait(lambda: ui.testid("import-destination").get_attribute("value") == archive
                and button.get_attribute("data-count") not in ("", str(here)),
                f"another folder, its own history: {button.text!r}", 20)
        expect(int(button.get_attribute("data-count")) > here, f"nothing is imported there yet: {button.text!r}")
        Select(choice).select_by_value(os.path.abspath(args.imported))
        ui.wait(lambda: ui.testid("import-destination").get_attribute("value") == os.path.abspath(args.imported)
                and button.get_attribute("data-count") == str(here), f"back to the first: {button.text!r}", 20)
        expect(not os.path.exists(archive), "choosing a folder creates nothing")
        size(*PHONE)
        try:
            # On a phone the options sit behind "…" with the toolbar's less used actions.
            if ui.testid("more").is_displayed():
                ui.testid("more").click()
            d.execute_script("document.getElementById('import-options').open = true")
            ui.screenshot("phone-import-options.png")
            options = d.execute_script("return document.getElementById('import-options').getBoundingClientRect().width")
            expect(0 < options <= PHONE[0], f"the options fit the phone's width: {options}")
            if ui.testid("more").get_attribute("aria-expanded") == "true":
                ui.testid("more").click()
        finally:
            size(*DESKTOP)
        ui.screenshot("desktop-import-options.png")
        # The whole card: 101FERRY's three photos count too.
        Select(scope).select_by_value("source")
        ui.wait(lambda: "all new" in button.text and button.get_attribute("data-count") == str(here + 3),
                f"whole card: {here + 3} new: {button.text!r}", 20)
        # Names and folders from templates, previewed before anything is copied (issue 26 item 5).
        Select(ui.testid("import-layout")).select_by_value("template")
        ui.testid("import-folder-template").send_keys("{tag}/{taken:%Y}")
        ui.testid("import-name-template").send_keys("{seq}_{name}")
        ui.testid("import-tag").send_keys("trip")
        shown = lambda: ui.testid("import-preview").text  # noqa: E731
        ui.wait(lambda: re.search(r"IMG_\d{4}\.JPG → trip/\d{4}/1_IMG_\d{4}\.JPG", shown()),
                f"the names previewed: {shown()!r}", 20)
        ui.screenshot("desktop-import-template-preview.png")
        ui.testid("import-name-template").send_keys("{nope}")
        ui.wait(lambda: "nope" in shown(), f"a bad template's reason: {shown()!r}", 20)
        for field in ("import-folder-template", "import-name-template", "import-tag"):
            ui.testid(field).clear()
        d.execute_script("for (const id of ['import-folder-template', 'import-name-template', 'import-tag'])"
                         " document.getElementById(id).dispatchEvent(new Event('input'))")
        Select(ui.testid("import-layout")).select_by_value("tree")
        expect(not os.path.exists(os.path.join(args.imported, "trip")), "a preview copies nothing")
        # Extensions named: none of that kind is there.
        Select(ui.testid("import-kinds")).select_by_value("only")
        field = ui.testid("import-only")
        field.send_keys("cr3,nef")
        field.send_keys(Keys.TAB)
        ui.wait(lambda: button.get_attribute("data-count") == "0" and not button.is_enabled(),
                f"no raw files: {button.text!r}", 20)
        # Remembered over a reload, then back to the defaults for the checks after this one.
        ui.go("/DCIM/100FERRY")
        expect(ui.testid("import-scope").get_attribute("value") == "source"
               and ui.testid("import-kinds").get_attribute("value") == "only", "options kept over a reload")
        d.execute_script("document.getElementById('import-options').open = true")
        Select(ui.testid("import-kinds")).select_by_value("media")
        Select(ui.testid("import-scope")).select_by_value("folder")
        ui.wait(lambda: "new here" in ui.testid("import-new").text
                and ui.testid("import-new").get_attribute("data-count") == str(here), "back to this folder", 20)
        d.execute_script("document.getElementById('import-options').open = false")

    @check("delete after import removes only verified files, after a confirmation naming the count")
    def _():
        ui.go("/DCIM/101FERRY")
        ui.testid("select-all").click()
        d.execute_script("document.getElementById('import-options').open = true")
        ui.testid("import-delete-after").click()
        ui.testid("import-selected").click()
        ui.wait(lambda: ui.testid("dialog").is_displayed(), "the confirmation")
        text = ui.testid("dialog").text
        expect("3 files" in text and "delete" in text, f"confirmation: {text!r}")
        ui.testid("dialog-ok").click()
        # The panel still says "done" (3 of 3) for the import before until its next poll: wait for
        # this one's deletes, which come after its verified copies.
        ui.wait(lambda: panel() == "done" and panel("data-total") == "3"
                and d.execute_script("return fetch('/api/import').then(r => r.json()).then(s => s.deleted)") == 3,
                "the import with its 3 deletes", 60)
        ui.testid("import-delete-after").click()  # off again
        d.execute_script("document.getElementById('import-options').open = false")
        for i in (1, 2, 3):
            expect(not os.path.exists(os.path.join(root, f"DCIM/101FERRY/DEL_{i:04d}.JPG")), f"DEL_{i:04d} still on the card")
            expect(os.path.getsize(os.path.join(args.imported, f"DCIM/101FERRY/DEL_{i:04d}.JPG")) > 0, "copy")
        expect(len(os.listdir(os.path.join(root, "DCIM/100FERRY"))) == 20, "other files untouched")
        ui.wait(lambda: len(ui.entries()) == 0, "the folder empty in the page")

    def waiting_folder(name, count=8):
        """A folder of photos the page has never seen (their thumbnails come from the card, one at a
        time): made while an import runs, so the import's plan leaves it out."""
        folder = os.path.join(root, "DCIM", name)
        os.makedirs(folder)
        for i in range(1, count + 1):
            shutil.copyfile(os.path.join(root, f"DCIM/100FERRY/IMG_{i:04d}.JPG"), os.path.join(folder, f"W{i:03d}.JPG"))
        return folder

    def thumbnails_loaded(page):
        return page.driver.execute_script(
            "return [...document.querySelectorAll('.entry .thumb img')].every(i => i.complete && i.naturalWidth > 0)")

    def watch_waiting(page, shot):
        """Waits for the page's 'waiting for the card' to appear (a screenshot then) and go."""
        page.wait(lambda: page.driver.execute_script("return (window.seen || {}).waiting || 0") > 0
                  or page.testid("waiting").is_displayed(), "'waiting for the card' to appear", 20)
        if page.testid("waiting").is_displayed():
            page.screenshot(shot)
        page.wait(lambda: thumbnails_loaded(page), "the folder's thumbnails", 30)
        page.wait(lambda: not page.testid("waiting").is_displayed(), "'waiting for the card' to go", 10)

    @check("import all new: reload continues, the card answers while importing, a second browser sees it and cancels"
           " mid-file, restart")
    def _():
        # The second browser starts first: Chromium takes seconds to start on a loaded machine.
        second = UI(args.url, args.artifacts)
        made = []
        try:
            second.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                          {"width": PHONE[0], "height": PHONE[1], "deviceScaleFactor": 1,
                                           "mobile": True})
            ui.go("/DCIM/100FERRY")
            d.execute_script(WATCH)
            ui.wait(lambda: "17" in ui.testid("import-new").text, f"17 new: {ui.testid('import-new').text}")
            ui.testid("import-new").click()
            ui.wait(lambda: panel() == "running" and int(panel("data-done")) >= 1, "the import running", 60)
            ui.screenshot("desktop-import-panel.png")
            made += [waiting_folder("102WAIT"), waiting_folder("103WAIT")]
            # A reload shows the same import.
            ui.go("/DCIM/100FERRY")
            d.execute_script(WATCH)
            ui.wait(lambda: panel() == "running", "the panel after a reload")
            expect(panel("data-total") == "17", f"total after reload {panel('data-total')}")
            # The page still answers: a folder listing and a photo in the viewer.
            started = time.monotonic()
            ui.testid("up").click()
            ui.wait(lambda: ui.path() == "/DCIM", "Up to /DCIM while importing")
            ui.wait_listed()
            figures["while importing: folder listing, click to list, ms"] = round((time.monotonic() - started) * 1000)
            ui.open_folder("100FERRY")
            started = time.monotonic()
            ui.entry("IMG_0019.JPG").find_element(By.CSS_SELECTOR, ".open").click()
            ui.wait(lambda: ui.testid("viewer-preview").is_displayed() or ui.attr("data-loaded") == "true",
                    "the placeholder")
            figures["while importing: viewer placeholder after the click, ms"] = \
                round((time.monotonic() - started) * 1000)
            ui.wait_loaded("IMG_0019.JPG", timeout=30)
            figures["while importing: viewer image sharp after the click, ms"] = \
                round((time.monotonic() - started) * 1000)
            ui.keys(Keys.ESCAPE)
            expect(panel() == "running", f"still importing: {panel()}")
            # A second browser (another person, or the phone) sees the same running import.
            second.go("/DCIM")
            second.wait(lambda: second.testid("import-panel").get_attribute("data-state") == "running",
                        "the running import in the second browser")
            expect(second.testid("import-panel").is_displayed(), "the import panel in the second browser")
            second.screenshot("phone-second-browser-import.png")
            # "waiting for the card" says what the server says: shown exactly while a request of this
            # page waits for the card's connection, never for another page's.
            ui.go("/DCIM")
            d.execute_script(WATCH)
            second.driver.execute_script(WATCH)
            ui.open_folder("102WAIT")
            watch_waiting(ui, "desktop-waiting.png")
            figures["'waiting for the card' shown in the page opening a new folder (times)"] = \
                d.execute_script("return window.seen.waiting || 0")
            other = second.driver.execute_script("return (window.seen || {}).waiting || 0")
            expect(other == 0, f"the second browser said 'waiting' {other} times for the first one's requests")
            d.execute_script("window.seen = {}; " + WATCH)
            second.open_folder("103WAIT")
            watch_waiting(second, "phone-waiting.png")
            other = d.execute_script("return (window.seen || {}).waiting || 0")
            expect(other == 0, f"the first browser said 'waiting' {other} times for the second one's requests")
            expect(panel() == "running", f"still importing: {panel()}")
            # Cancel in the middle of a file, from the second browser.
            second.wait(lambda: second.testid("import-current").get_attribute("textContent").startswith("Now:"),
                        "a file downloading")
            done_before = int(second.testid("import-panel").get_attribute("data-done"))
            second.testid("import-cancel").click()
            wait_import("cancelled", 30)
            second.wait(lambda: second.testid("import-panel").get_attribute("data-state") == "cancelled",
                        "cancelled in the second browser")
        finally:
            second.driver.quit()
            ui.go("/DCIM/100FERRY")
            for folder in made:
                shutil.rmtree(folder)
        done_before = int(panel("data-done"))
        expect(done_before < 17, f"cancelled after {done_before} files")
        copies = [r for r in imported_files(args.imported) if os.path.exists(os.path.join(root, r))]
        expect(len(copies) >= 3 + done_before, f"copies after the cancel: {copies}")
        for relative in copies:
            expect(same(relative), f"{relative}: a partial or different file under its final name")
        figures["import cancelled after files"] = done_before
        # Restart: what is imported is skipped, the rest arrives (partial files resume).
        ui.testid("import-restart").click()
        wait_import("done", 120)
        for i in range(1, 21):
            expect(same(f"DCIM/100FERRY/IMG_{i:04d}.JPG"), f"IMG_{i:04d}.JPG after the restart")
        status = d.execute_script("return fetch('/api/import').then(r => r.json())")
        figures["import downloads paused for the page or a prefetch (times)"] = status["pauses"]
        figures["prefetch downloads paused for the page (times)"] = status["prefetchPauses"]
        expect(status["pauses"] >= 1, f"the import was never paused for the page: {status}")
        expect(status["restarts"] == 0, f"a paused download started over: {status}")
        ui.wait(lambda: d.execute_script("return [...document.querySelectorAll('[data-testid=entry]')]"
                                         ".every(e => e.dataset.imported === 'true')"), "all badges")
        ui.wait(lambda: "(0," in ui.testid("import-new").text, f"none new: {ui.testid('import-new').text}")

    @check("ferry sync of the same card into the same folder imports nothing")
    def _():
        before = sorted(imported_files(args.imported))
        out = subprocess.run([args.ferry, "sync", args.card_url, args.imported, "--json"],
                             capture_output=True, text=True, timeout=120)
        expect(out.returncode == 0, f"ferry sync: {out.returncode} {out.stderr}")
        after = sorted(imported_files(args.imported))
        expect(before == after, f"ferry sync imported {set(after) - set(before)}")
        said = out.stdout.replace(" ", "")
        expect('"imported":0' in said and '"alreadyImported":20' in said, f"ferry sync said {out.stdout[-400:]}")

    @check("viewer: counter, information panel, original on zoom with progress, prefetch")
    def _():
        ui.go("/DCIM/100FERRY")
        d.execute_script(WATCH)
        ui.open_image("IMG_0001.JPG")
        ui.wait_loaded("IMG_0001.JPG", timeout=30)
        expect(ui.testid("viewer-counter").text == "1 / 20", ui.testid("viewer-counter").text)
        ui.keys("i")
        ui.wait(lambda: "Pixels" in ui.testid("viewer-info").text and "1600 × 1200" in ui.testid("viewer-info").text,
                "the information panel")
        expect("Ferry demo" in ui.testid("viewer-info").text, ui.testid("viewer-info").text)
        ui.screenshot("desktop-viewer-info.png")
        expect(ui.attr("data-level") == "preview", f"level {ui.attr('data-level')}")
        for _ in range(12):
            if ui.testid("zoom-in").is_enabled():
                ui.testid("zoom-in").click()
        ui.wait(lambda: ui.attr("data-level") == "original", "the original for the zoom", 30)
        seen = d.execute_script("return window.seen")
        expect(seen.get("viewer-progress", 0) > 0, f"no progress shown: {seen}")
        ui.keys("0")
        time.sleep(2.5)  # a moment on the image: the neighbours are fetched
        started = time.monotonic()
        ui.keys(Keys.ARROW_RIGHT)
        ui.wait_loaded("IMG_0002.JPG", timeout=30)
        figures["next image after 2.5 s on the current one, sharp, ms (prefetched)"] = \
            round((time.monotonic() - started) * 1000)
        expect(ui.testid("viewer-counter").text == "2 / 20", ui.testid("viewer-counter").text)
        ui.keys("i")
        ui.keys(Keys.ESCAPE)

    @check("phone layout 390x844: no overlapping controls, title visible, tiles one row")
    def _():
        size(*PHONE)
        try:
            ui.go("/DCIM/100FERRY")
            ui.screenshot("phone-list.png")
            bar = visible_boxes(".bar button, .bar select, .bar .button, .bar .check, .bar summary, #count")
            expect(len(bar) >= 6, f"toolbar controls {bar}")
            expect(not overlaps(bar), f"toolbar overlaps: {overlaps(bar)}")
            expect(not [b for b in bar if b[3] > PHONE[0] + 0.5], f"toolbar beyond the screen: {bar}")
            sort = ui.testid("sort").is_displayed(), ui.testid("sort-direction").is_displayed()
            expect(sort[0] == sort[1], f"sort menu and direction shown together: {sort}")
            toolbar = d.execute_script("return document.querySelector('.bar').getBoundingClientRect().height")
            expect(toolbar < PHONE[1] / 5, f"the toolbar takes {toolbar} of {PHONE[1]} px")
            columns = d.execute_script("return new Set([...document.querySelectorAll('.entries .entry')]"
                                       ".map(e => Math.round(e.getBoundingClientRect().left))).size")
            expect(columns >= 4, f"{columns} columns at 390 px")
            select("IMG_0004.JPG")
            select("IMG_0006.JPG", shift=True)
            bar = visible_boxes(".bar button, .bar select, .bar .button, .bar .check, .bar summary, #count,"
                                " #selection-count")
            expect(not overlaps(bar), f"selection bar overlaps: {overlaps(bar)}")
            ui.screenshot("phone-selection.png")
            ui.keys(Keys.ESCAPE)
            ui.open_image("IMG_0003.JPG")
            ui.wait_loaded("IMG_0003.JPG", timeout=30)
            ui.keys("i")
            ui.wait(lambda: "Pixels" in ui.testid("viewer-info").text, "the information panel")
            boxes = visible_boxes(".viewer-bar button, .viewer-bar .button, .viewer-bar h1, #viewer-counter, #zoom-level")
            expect(not overlaps(boxes), f"viewer controls overlap: {overlaps(boxes)}")
            title = [b for b in boxes if b[0] == "viewer-title"]
            expect(title and title[0][3] - title[0][1] > 40, f"viewer title width: {title}")
            expect(not [b for b in boxes if b[3] > PHONE[0] + 0.5], f"viewer controls beyond the screen: {boxes}")
            ui.screenshot("phone-viewer-info.png")
            ui.keys("i")
            ui.keys(Keys.ESCAPE)
            d.execute_script("document.getElementById('import-panel').dataset.dismissed = ''")
            ui.wait(lambda: ui.testid("import-panel").is_displayed(), "the import panel", 10)
            ui.screenshot("phone-import-panel.png")
        finally:
            size(*DESKTOP)

    @check("desktop layout 1280x800: no overlapping controls")
    def _():
        ui.go("/DCIM/100FERRY")
        ui.screenshot("desktop-list.png")
        bar = visible_boxes(".bar button, .bar select, .bar .button, .bar .check, .bar summary, #count")
        expect(not overlaps(bar), f"toolbar overlaps: {overlaps(bar)}")
        ui.open_image("IMG_0003.JPG")
        ui.wait_loaded("IMG_0003.JPG", timeout=30)
        boxes = visible_boxes(".viewer-bar button, .viewer-bar .button, .viewer-bar h1, #viewer-counter, #zoom-level")
        expect(not overlaps(boxes), f"viewer controls overlap: {overlaps(boxes)}")
        ui.keys(Keys.ESCAPE)

    @check("names with a slash or control characters are refused in the dialog; banners close")
    def _():
        ui.go("/DCIM/100FERRY")
        ui.testid("new-folder").click()
        ui.wait(lambda: ui.testid("dialog").is_displayed(), "the dialog")
        ui.testid("dialog-input").send_keys("a/b:c?")
        ui.testid("dialog-ok").click()
        ui.wait(lambda: ui.testid("dialog-problem").is_displayed(), "the reason in the dialog")
        expect("/" in ui.testid("dialog-problem").text, ui.testid("dialog-problem").text)
        expect(ui.testid("dialog").is_displayed(), "the dialog stays open")
        ui.testid("dialog-cancel").click()
        expect(not os.path.exists(os.path.join(root, "DCIM/100FERRY/a")), "a request was made")
        # An error banner closes with its button, and a later success clears it.
        d.get(args.url + "?path=/DCIM/nope")
        ui.wait(lambda: ui.testid("message").is_displayed(), "an error banner")
        expect(args.root not in ui.testid("message").text, "the server's folder in a message")
        ui.testid("message-close").click()
        expect(not ui.testid("message").is_displayed(), "closed")

    @check("a non-empty folder: its count asked once, then deleted item by item with the result")
    def _():
        old = os.path.join(root, "OLD")
        os.makedirs(os.path.join(old, "SUB"))
        for i, name in enumerate(("a.txt", "b.txt", "SUB/c.txt")):
            with open(os.path.join(old, name), "wb") as f:
                f.write(b"x" * (1000 * (i + 1)))
        ui.go()
        ui.select("OLD")
        ui.testid("delete-selected").click()
        ui.wait(lambda: ui.testid("dialog").is_displayed(), "the question")
        ui.testid("dialog-ok").click()  # "Delete the folder OLD?"
        ui.wait(lambda: ui.testid("dialog").is_displayed() and "holds" in ui.testid("dialog").text,
                "the second question")
        text = ui.testid("dialog").text
        expect("3 files" in text and "6.0 KB" in text, f"second question: {text!r}")
        ui.testid("dialog-ok").click()
        ui.wait(lambda: not os.path.exists(old), "OLD deleted", 30)
        ui.wait(lambda: "Deleted “OLD” and its 3 files" in ui.testid("message").text, "the result")
        ui.wait(lambda: not ui.driver.find_elements(By.CSS_SELECTOR, '[data-testid="entry"][data-name="OLD"]'), "OLD gone")

    @check("accessible (axe-core): no serious or critical violation on the list, the viewer, the import panel,"
           " the options and a dialog, at phone and desktop size; focus visible")
    def _():
        found = {}

        def audit(place):
            version, all_found = accessibility.violations(d)
            figures["axe-core version"] = version
            bad = accessibility.serious(all_found)
            found[place] = len(all_found)
            expect(not bad, f"{place}: {accessibility.describe(bad)}")

        for screen, name in ((DESKTOP, "desktop"), (PHONE, "phone")):
            size(*screen)
            try:
                ui.go("/DCIM/100FERRY")
                ui.wait(lambda: ui.entries(), "the photos")
                audit(f"{name} list")
                d.execute_script("document.getElementById('import-panel').dataset.dismissed = ''")
                ui.wait(lambda: ui.testid("import-panel").is_displayed(), "the import panel", 10)
                if ui.testid("more").is_displayed():
                    ui.testid("more").click()
                d.execute_script("document.getElementById('import-options').open = true")
                audit(f"{name} import panel and options")
                d.execute_script("document.getElementById('import-options').open = false")
                if ui.testid("more").get_attribute("aria-expanded") == "true":
                    ui.testid("more").click()
                select("IMG_0004.JPG")
                audit(f"{name} selection bar")
                ui.testid("delete-selected").click()
                ui.wait(lambda: ui.testid("dialog").is_displayed(), "the delete confirmation")
                audit(f"{name} dialog")
                ui.testid("dialog-cancel").click()
                ui.keys(Keys.ESCAPE)
                ui.open_image("IMG_0003.JPG")
                ui.wait_loaded("IMG_0003.JPG", timeout=30)
                audit(f"{name} viewer")
                ui.keys("i")
                ui.wait(lambda: "Pixels" in ui.testid("viewer-info").text, "the information panel")
                audit(f"{name} viewer with its information")
                ui.keys("i")
                ui.keys(Keys.ESCAPE)
            finally:
                size(*DESKTOP)
        figures["axe-core violations of lesser impact (by place)"] = found
        # Focus is visible: each control the keyboard reaches in the toolbar draws an outline.
        ui.go("/DCIM/100FERRY")
        d.find_element(By.TAG_NAME, "body").click()
        unseen = []
        for _ in range(8):
            ActionChains(d).send_keys(Keys.TAB).perform()
            style = d.execute_script(
                "const e = document.activeElement; const s = getComputedStyle(e);"
                "return [e.id || e.dataset.testid || e.tagName, s.outlineStyle, s.outlineWidth, s.boxShadow];")
            if style[1] == "none" and style[3] == "none":
                unseen.append(style[0])
        expect(not unseen, f"focus not visible on {unseen}")

    @check("connect page: a bare host is probed, a card found by its firmware version, nothing there said so")
    def _():
        cache = tempfile.mkdtemp(prefix="ferry-connect-cache")
        serve = subprocess.Popen([args.ferry, "serve", "--port", "0", "--cache", cache], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
        try:
            found = re.search(r"open (http://\S+)", serve.stdout.readline())
            expect(found, "ferry serve without a source did not print its address")
            closed = socket.socket()
            closed.bind(("127.0.0.1", 0))
            nobody = f"127.0.0.1:{closed.getsockname()[1]}"
            closed.close()
            for (w, h), name in ((PHONE, "phone"), (DESKTOP, "desktop")):
                size(w, h)
                d.get(found.group(1))
                ui.wait(lambda: ui.testid("connect-url").is_displayed(), "the connect page")
                ui.testid("connect-url").send_keys(nobody)
                ui.testid("connect").click()
                ui.wait(lambda: "nothing answered" in d.find_element(By.ID, "connect-error").text,
                        "the probe's answer", 30)
                text = d.find_element(By.ID, "connect-error").text
                expect("FlashAir" in text and "FTP" in text and "web server" in text, f"the message: {text!r}")
                ui.screenshot(f"{name}-connect-nothing-there.png")
            card = re.search(r"flashair://([^/]+)", args.card_url).group(1)
            ui.testid("connect-url").clear()
            ui.testid("connect-url").send_keys(card)
            ui.testid("connect").click()
            ui.wait(lambda: d.find_element(By.ID, "browser").is_displayed() and ui.path() == "/", "the card's root", 30)
            ui.wait_listed()
            names = [e.get_attribute("data-name") for e in ui.entries()]
            expect(names == ["DCIM"], f"the card's root: {names}")
            source = d.execute_script("return fetch('/api/source').then(r => r.json())")
            expect(source["scheme"] == "flashair", f"opened as {source}")
            ui.screenshot("desktop-connect-card.png")
        finally:
            size(*DESKTOP)
            serve.terminate()
            serve.wait()
            shutil.rmtree(cache, ignore_errors=True)

    d.quit()
    for name, value in figures.items():
        print(f"figure: {name}: {value}")
    failed = [name for name, error in results if error is not None]
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
