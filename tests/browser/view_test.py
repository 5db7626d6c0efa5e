#!/usr/bin/python3
"""The page of `pebblesim view` in a real browser (docs/VIEWER.md, "Tests").

Debian's chromium, headless, driven by chromedriver over WebDriver's HTTP
protocol with the standard library only. For each trace the test makes a
page, then:

- plays it to the end with the play button and checks that the totals and
  the table by array it displays equal the engine's loads, saves and I/O
  (`pebblesim validate --json`, and its "by_array" when it has one), and
  the peak of red pebbles;
- seeks to steps inside the trace (forward, then back, through the
  checkpoints) and checks that the state of every node the page holds,
  and every cell it draws, is the engine's after that prefix
  (build/pebblesim-prefix-state);
- for a trace that breaks a rule: that `view` exits 1 and the page shows
  the engine's violation and stops before its line;
- reads the browser's console: no error; and the page's resource
  timings: nothing fetched;
- takes a screenshot and checks that it is not blank: many colours, the
  red and the blue of the pebbles among them;
- at 1400 x 900, the size of a laptop's browser: the fast-memory chart is
  in view without scrolling (its box within the window, and its dark red
  line in the screenshot's rows where the chart stands), and the grids
  scale to the window (an array of a few columns at least 100 px wide,
  the tallest at least 160 px high), and are laid out again within a
  window half as wide.

usage: view_test.py PEBBLESIM PREFIX_STATE WORKDIR
"""
import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zlib

PEBBLESIM, PREFIX_STATE, WORK = sys.argv[1:4]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
failures = []
# the colours of the legend (src/viewer/viewer.js): neither, red, blue,
# both, partial
COLOURS = [(238, 238, 238), (214, 39, 40), (31, 119, 180), (148, 103, 189), (255, 160, 20),
           (255, 255, 255)]
CATS = len(COLOURS)


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def run(*args, expect=0):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != expect:
        sys.exit("view_test: %s exited %d (expected %d): %s" %
                 (" ".join(args), p.returncode, expect, p.stderr))
    return p.stdout


class Driver:
    """A WebDriver session on a chromedriver of our own."""

    def __init__(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen([CHROMEDRIVER, "--port=%d" % self.port],
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self.base = "http://127.0.0.1:%d" % self.port
        for _ in range(200):
            try:
                if self.call("GET", "/status")["ready"]:
                    break
            except (OSError, urllib.error.URLError):
                time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                # root in CI: chromium's sandbox needs a user namespace
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--hide-scrollbars",
                         "--window-size=1400,1300"]}}}}
        self.session = self.call("POST", "/session", caps)["sessionId"]

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=600) as r:
                return json.loads(r.read())["value"]
        except urllib.error.HTTPError as e:
            sys.exit("view_test: WebDriver %s %s: %s" % (method, path, e.read()[:2000]))

    def s(self, method, path, body=None):
        return self.call(method, "/session/%s%s" % (self.session, path), body)

    def js(self, script, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css):
        found = self.s("POST", "/element", {"using": "css selector", "value": css})
        return list(found.values())[0]

    def text(self, css):
        return self.s("GET", "/element/%s/text" % self.find(css))

    def click(self, css):
        self.s("POST", "/element/%s/click" % self.find(css), {})

    def console(self):
        return self.s("POST", "/se/log", {"type": "browser"})

    def quit(self):
        try:
            self.s("DELETE", "")
        finally:
            self.proc.terminate()
            self.proc.wait()


def number(text):
    digits = "".join(ch for ch in text if ch.isdigit())
    return int(digits) if digits else None


def png_pixels(png):
    """The RGB(A) pixels of a PNG of 8-bit truecolour, as rows of bytes."""
    pos, chunks = 8, {}
    idat = b""
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        body = png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            chunks["IHDR"] = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour = chunks["IHDR"][:4]
    assert depth == 8 and colour in (2, 6), "a PNG of 8-bit RGB or RGBA"
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def check_screenshot(d, name):
    png = base64.b64decode(d.s("GET", "/screenshot"))
    path = os.path.join(WORK, name + ".png")
    with open(path, "wb") as f:
        f.write(png)
    width, height, bpp, rows = png_pixels(png)
    colours = set()
    red = blue = 0
    for row in rows[::3]:
        for x in range(0, width * bpp, 3 * bpp):
            r, g, b = row[x], row[x + 1], row[x + 2]
            colours.add((r, g, b))
            red += r > 180 and g < 90 and b < 90
            blue += b > 150 and r < 80 and g < 150
    check(len(colours) > 50 and red > 20 and blue > 20,
          "%s: the screenshot is not blank (%d colours, %d red and %d blue samples; %s)" %
          (name, len(colours), red, blue, path))


def cell_weights(n):
    """A cell's colour weights (src/viewer/viewer.js, cellWeights): its
    nodes of each colour, red ones (red, red and blue) weighing at least a
    third when there are any."""
    w = list(n)
    red, total = w[1] + w[3], sum(w)
    if red and 3 * red < total:
        f = (total - red) / (2 * red)
        w[1] *= f
        w[3] *= f
    return w


def check_above_the_fold(d, page, step):
    """At 1400 x 900: the chart in view, the grids scaled to the window."""
    d.s("POST", "/window/rect", {"width": 1400, "height": 900})
    d.s("POST", "/url", {"url": "file://" + page})
    d.js("window.scrollTo(0, 0); window.pebblesimView.seek(arguments[0]);", step)
    inner = d.js("return [window.innerWidth, window.innerHeight];")
    box = d.js("""var r = document.getElementById('chart').getBoundingClientRect();
        return [r.left, r.top, r.right, r.bottom, window.scrollY];""")
    check(box[4] == 0 and box[1] >= 0 and box[3] <= inner[1],
          "1400 x 900: the chart (top %d, bottom %d) is within the window's %d px" %
          (box[1], box[3], inner[1]))
    png = base64.b64decode(d.s("GET", "/screenshot"))
    path = os.path.join(WORK, "fold.png")
    with open(path, "wb") as f:
        f.write(png)
    width, height, bpp, rows = png_pixels(png)
    scale = height / inner[1]  # device pixels a CSS pixel
    dark = 0
    for y in range(int(box[1] * scale), min(height, int(box[3] * scale))):
        row = rows[y]
        for x in range(int(box[0] * scale) * bpp, min(width, int(box[2] * scale)) * bpp, bpp):
            r, g, b = row[x], row[x + 1], row[x + 2]
            dark += abs(r - 0xb2) < 24 and g < 70 and b < 70
    check(dark > 200, "1400 x 900: the screenshot shows the chart's red line (%d pixels; %s)" %
          (dark, path))
    sizes = d.js("""return Array.from(document.querySelectorAll('.grid canvas')).map(function (c) {
        var r = c.getBoundingClientRect(); return [c.getAttribute('data-array'), r.width, r.height]; });""")
    columns = d.js("return window.pebblesimView.shapes();")
    # an array of a few columns (Q's 16) is not drawn a few pixels wide
    narrow = min((s for s in sizes if columns[s[0]] <= 64), key=lambda s: s[1])
    tall = max(s[2] for s in sizes)
    check(narrow[1] >= 100 and tall >= 160,
          "1400 x 900: the grids scale to the window (narrowest of few columns: %s, %.0f px wide; "
          "tallest %.0f px)" % (narrow[0], narrow[1], tall))
    d.s("POST", "/window/rect", {"width": 700, "height": 900})
    again = d.js("""return [window.innerWidth, Array.from(document.querySelectorAll('.grid canvas'))
        .map(function (c) { var r = c.getBoundingClientRect(); return [r.right, r.height]; })];""")
    right = max(r for r, _ in again[1])
    check(right <= again[0] and [h for _, h in again[1]] != [s[2] for s in sizes],
          "700 x 900: the grids laid out again within the narrower window (right edge %.0f of %d px)" %
          (right, again[0]))
    d.s("POST", "/window/rect", {"width": 1400, "height": 1300})


def shapes_of(trace):
    """The arrays the page of trace embeds, by name: which rows and cells
    are nodes of the DAG, as `pebblesim view` wrote them from the library's
    DAG (first_row, lower_triangle)."""
    page = open(trace[:-len(".jsonl")] + ".html").read()
    data = re.search(r'<script[^>]*id="pebblesim-data"[^>]*>(.*?)</script>', page, re.S).group(1)
    return {a["name"]: a for a in json.loads(data)["arrays"]}


def check_state(d, trace, k, arrays):
    """The page at step k against the engine after the first k operations;
    arrays: the columns of each array, by name."""
    got = d.js("""var t = performance.now(), k = window.pebblesimView.seek(arguments[0]);
        return [k, performance.now() - t];""", k)
    check(got[0] == k, "%s: seek to step %d (%.0f ms, drawing included)" % (trace, k, got[1]))
    engine = json.loads(run(PREFIX_STATE, trace, str(k)))
    check(d.js("return window.pebblesimView.red();") == engine["red"],
          "%s step %d: red pebbles %d, as the engine" % (trace, k, engine["red"]))
    check(sorted(arrays) == sorted(engine["arrays"]),
          "%s step %d: the page draws the engine's arrays (%s)" % (trace, k, " ".join(sorted(arrays))))
    shapes = shapes_of(trace)
    for name in arrays:
        page = d.js("return window.pebblesimView.codes(arguments[0]);", name)
        want = engine["arrays"][name]
        # places that are no node of the DAG (MODEL.md sections 7 and 8:
        # causal S and E for j > i, rows before decoding's first): the page
        # holds no pebble there; the engine's state of those ids is not a
        # node's (it marks the prompt's rows of an input kind blue), so
        # they are left out of the comparison
        shape = shapes[name]
        absent = [idx for idx in range(len(want))
                  if idx // arrays[name] < shape.get("first_row", 0) or
                  (shape.get("lower_triangle") and idx % arrays[name] > idx // arrays[name])]
        held = sum(1 for idx in absent if idx < len(page) and page[idx] != "0")
        check(held == 0, "%s step %d: %s's places that are no node hold no pebble on the page (%d do)" %
              (trace, k, name, held))
        if absent:
            page, want = list(page), list(want)
            for idx in absent:
                if idx < len(page):
                    page[idx] = "0"
                want[idx] = "0"
            page, want = "".join(page), "".join(want)
        same = page == want
        if not same:
            first = next(i for i in range(min(len(page), len(want))) if page[i] != want[i]) \
                if len(page) == len(want) else -1
            print("      first difference at node %d: page %s, engine %s" %
                  (first, page[first] if first >= 0 else "?", want[first] if first >= 0 else "?"))
        check(same, "%s step %d: every node of %s as the engine (%d nodes)" %
              (trace, k, name, len(want)))
        # the cells drawn: counts of each colour from the engine's nodes
        cells = d.js("return window.pebblesimView.cells(arguments[0]);", name)
        rows, cols = cells["rows"], cells["cols"]
        expect = [0] * (rows * cols * CATS)
        nodes_cols = arrays[name]
        for idx, ch in enumerate(want):
            code = int(ch)
            cat = 4 if code & 4 else code & 3
            r, c = divmod(idx, nodes_cols)
            # no node of the DAG (MODEL.md sections 7 and 8): drawn apart
            if r < shape.get("first_row", 0) or (shape.get("lower_triangle") and c > r):
                cat = 5
            cell = (r // cells["br"]) * cols + c // cells["bc"]
            expect[cell * CATS + cat] += 1
        check(cells["counts"] == expect,
              "%s step %d: every cell of %s counts the engine's nodes (%d cells)" %
              (trace, k, name, rows * cols))
        # and each cell's pixel has the mean colour of the engine's nodes,
        # red pebbles weighing at least a third of a cell that holds any
        pixels = d.js("""var c = document.querySelector('canvas[data-array="' + arguments[0] + '"]');
            return Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data);""", name)
        wrong = 0
        for cell in range(rows * cols):
            n = cell_weights(expect[cell * CATS:cell * CATS + CATS])
            mean = [round(sum(n[c] * COLOURS[c][ch] for c in range(CATS)) / sum(n)) for ch in range(3)]
            got = pixels[cell * 4:cell * 4 + 3]
            wrong += any(abs(a - b) > 1 for a, b in zip(got, mean))
        check(wrong == 0, "%s step %d: every cell of %s drawn in the mean colour of its nodes (%d wrong)" %
              (trace, k, name, wrong))


def play_to_end(d, trace, steps):
    d.js("var s = document.getElementById('speed'); s.value = '0';")
    d.click("#first")
    d.click("#play")
    started = time.time()
    deadline = started + 300
    while time.time() < deadline:
        if d.js("return window.pebblesimView.step();") == steps:
            break
        time.sleep(0.2)
    print("      %s: played %d operations in %.1f s, as fast as drawn" %
          (trace, steps, time.time() - started))
    label = d.text("#step-label")
    check(number(label.split("of")[0]) == steps and number(label.split("of")[1]) == steps,
          "%s: played to the end (%s)" % (trace, label))


def check_dag_named(d, name, words):
    """The page loaded last says which DAG it plays."""
    shown = d.text("#params")
    check(words in shown, "%s: the page names its DAG (%s)" % (name, words))


def check_trace(d, name, make_args, mid_steps, by_array_check=True):
    trace = os.path.join(WORK, name + ".jsonl")
    page = os.path.join(WORK, name + ".html")
    run(PEBBLESIM, *make_args, "--trace", trace)
    report = json.loads(run(PEBBLESIM, "validate", "--json", trace))
    run(PEBBLESIM, "view", trace, "-o", page)
    d.s("POST", "/url", {"url": "file://" + page})
    check(d.js("return document.body.getAttribute('data-ready');") == "1",
          "%s: the page's script ran" % name)
    fetched = d.js("return performance.getEntriesByType('resource').map(function (e) { return e.name; });")
    check(fetched == [], "%s: the page fetched nothing (%s)" % (name, fetched))
    view = d.js("""var v = window.pebblesimView; return {steps: v.steps,
        firstPassMs: v.firstPassMs, arrays: Array.from(document.querySelectorAll(
        '#io-body td[data-field=loads]')).map(function (td) {
        return td.getAttribute('data-array'); })};""")
    steps = view["steps"]
    print("      %s: %d operations, first pass %.0f ms" % (name, steps, view["firstPassMs"]))
    play_to_end(d, name, steps)
    loads = number(d.text("#total-loads"))
    saves = number(d.text("#total-saves"))
    io = number(d.text("#total-io"))
    check((loads, saves, io) == (report["loads"], report["saves"], report["io"]),
          "%s: totals displayed %s equal validate's (%d, %d, %d)" %
          (name, (loads, saves, io), report["loads"], report["saves"], report["io"]))
    moves = d.js("return window.pebblesimView.moves();")
    check(moves == report["moves"],
          "%s: the operations' elementary moves add up to validate's %d (page: %d)" %
          (name, report["moves"], moves))
    check(number(d.text("#peak-now")) == report["peak_red"],
          "%s: peak red displayed equals validate's %d" % (name, report["peak_red"]))
    by_array = {}
    for array in view["arrays"]:
        by_array[array] = {
            "loads": number(d.text('td[data-array="%s"][data-field=loads]' % array)),
            "saves": number(d.text('td[data-array="%s"][data-field=saves]' % array))}
    check(sum(v["loads"] for v in by_array.values()) == report["loads"] and
          sum(v["saves"] for v in by_array.values()) == report["saves"],
          "%s: the table by array sums to validate's loads and saves" % name)
    if "by_array" in report:
        # an array either side leaves out moved nothing
        zero = {"loads": 0, "saves": 0}
        engine = {k: {"loads": v["loads"], "saves": v["saves"]}
                  for k, v in report["by_array"].items()}
        differ = [k for k in set(engine) | set(by_array)
                  if engine.get(k, zero) != by_array.get(k, zero)]
        check(not differ, "%s: the table by array equals validate's by_array (differ: %s)" %
              (name, differ))
    else:
        print("      (validate --json has no by_array: totals compared)")
    shapes = d.js("""return window.pebblesimView.shapes();""")
    for k in mid_steps(steps):
        check_state(d, trace, k, shapes)
    return trace, report


def main():
    os.makedirs(WORK, exist_ok=True)
    d = Driver()
    try:
        check_trace(d, "small", ["--case", "II", "-n", "64", "-d", "4", "-g", "2", "-M", "100"],
                    lambda s: [s // 2, 1, s])
        check_trace(d, "exact", ["--attention", "exact", "-n", "128", "-d", "4", "-M", "256"],
                    lambda s: [s // 3, s])
        # causal (MODEL.md section 7): the state H[j,m,b] drawn rows x
        # (m, b); causal exact S and E only for j <= i, O[i] of i + 1
        check_trace(d, "causal", ["--causal", "-n", "64", "-d", "4", "-g", "2", "-M", "200"],
                    lambda s: [1, s // 2, s])
        check_dag_named(d, "causal", "row i sees keys j <= i only")
        check_trace(d, "causal-exact", ["--attention", "exact", "--causal", "-n", "64", "-d", "4", "-M", "200"],
                    lambda s: [s // 2, s])
        # decoding (section 8): the prompt's cache or state starts blue,
        # each token's Q, K, V computed
        check_trace(d, "decode", ["--attention", "exact", "--causal", "--decode", "40", "-n", "64", "-d", "4",
                                  "-M", "200"], lambda s: [1, 7, s // 2, s])
        check_dag_named(d, "decode", "prompt P = 40 rows, rows 40..63 generated one at a time (24 tokens)")
        check_trace(d, "decode-approx", ["--causal", "--decode", "40", "-n", "64", "-d", "4", "-g", "2",
                                         "-M", "200"], lambda s: [1, 7, s // 2, s])
        trace, report = check_trace(
            d, "headline", ["--case", "II", "-n", "4096", "-d", "16", "-g", "3", "-M", "8192"],
            lambda s: [s // 2, s // 3])
        check_screenshot(d, "headline")
        check_above_the_fold(d, os.path.join(WORK, "headline.html"), 6013)

        # a trace that breaks a rule: the same with less memory
        page = os.path.join(WORK, "broken.html")
        bad = json.loads(run(PEBBLESIM, "validate", "--json", "-M", "6000", trace, expect=1))
        run(PEBBLESIM, "view", "-M", "6000", trace, "-o", page, expect=1)
        d.s("POST", "/url", {"url": "file://" + page})
        message = bad["violation"]["message"]
        line = int(re.search(r":(\d+): ", message).group(1))
        steps = d.js("return window.pebblesimView.steps;")
        check(steps == line - 2, "broken: the page stops before line %d (%d operations)" % (line, steps))
        d.click("#last")
        shown = d.text("#broken")
        check(shown == message, "broken: the page shows the engine's violation (%s)" % shown)

        logs = d.console()
        severe = [e for e in logs if e.get("level") == "SEVERE"]
        check(not severe, "the console shows no error (%d entries, %s)" % (len(logs), severe[:3]))
    finally:
        d.quit()
    if failures:
        sys.exit("view_test: %d checks failed" % len(failures))
    print("view_test: every check passed")


if __name__ == "__main__":
    main()
