#!/usr/bin/env python3
"""results_check.py - checks for tests/integration/results.sh, with the
standard library only (no PIL):

  json FILE...             each parses, is collbench results, rows complete
  png FILE W H             a PNG of W x H pixels, not blank (several colours)
  svg FILE                 parses as XML with an <svg> root
  html FILE MIN_IMAGES     parses; embeds >= MIN_IMAGES base64 PNGs that
                           each pass the png check; no external references
  plant FILE OUT KIND      write OUT: FILE with a planted change (regress:
                           one busbw halved; wrong: wrong values in a row)

Prints what failed and exits 1, else exits 0.
"""
import base64
import html.parser
import json
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

ROW_KEYS = ["collective", "algo", "transport", "dtype", "op", "ranks",
            "hosts", "bytes", "count", "inplace", "time_us", "algbw_gbps",
            "busbw_gbps", "wrong", "algo_model_us", "time_min_us",
            "time_p50_us", "time_p99_us", "time_max_us", "slowest_rank",
            "root", "push_per_s", "pull_per_s", "staleness_p50",
            "staleness_p99", "staleness_max", "iters"]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check_json(path):
    with open(path) as f:
        d = json.load(f)
    if d.get("schema") != "collbench-results" or d.get("schema_version") != 1:
        fail(f"{path}: schema {d.get('schema')} {d.get('schema_version')}")
    for k in ["collbench", "argv", "start_time", "status", "ranks", "hosts",
              "transport", "settings", "model", "environment", "rows"]:
        if k not in d:
            fail(f"{path}: no {k}")
    if not d["rows"]:
        fail(f"{path}: no rows")
    for i, r in enumerate(d["rows"]):
        if list(r.keys()) != ROW_KEYS:
            fail(f"{path}: row {i} keys {list(r.keys())}")


def png_pixels(data):
    """(width, height, set of pixels, count of the commonest pixel)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("not a PNG signature")
    pos, idat, w = 8, b"", None
    plte = None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB",
                                                                body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"PLTE":
            plte = body
        pos += 12 + n
    if w is None or depth != 8 or interlace != 0:
        fail(f"PNG layout not handled: depth {depth} interlace {interlace}")
    bpp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    counts = {}
    for y in range(h):
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
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[x] = (line[x] + pr) & 255
        for x in range(0, stride, bpp):
            px = bytes(line[x:x + bpp])
            counts[px] = counts.get(px, 0) + 1
        prev = line
    return w, h, counts


def check_png_data(data, what, want_w=None, want_h=None):
    w, h, counts = png_pixels(data)
    if want_w is not None and (w, h) != (want_w, want_h):
        fail(f"{what}: {w}x{h}, want {want_w}x{want_h}")
    top = max(counts.values())
    if len(counts) < 4 or top > 0.99 * w * h:
        fail(f"{what}: blank: {len(counts)} colours, commonest "
             f"{100.0 * top / (w * h):.1f}% of the pixels")
    return w, h, len(counts)


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.external, self.stack, self.title = [], [], [], ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a.get("src", ""))
        for k in ("src", "href"):
            v = a.get(k)
            if v and not v.startswith("data:") and not v.startswith("#"):
                self.external.append(v)
        if tag not in ("meta", "img", "br", "link"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            fail(f"HTML: </{tag}> closes <{self.stack[-1:]}>")
        self.stack.pop()


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "json":
        for p in args:
            check_json(p)
    elif cmd == "png":
        with open(args[0], "rb") as f:
            w, h, n = check_png_data(f.read(), args[0], int(args[1]),
                                     int(args[2]))
        print(f"ok: {args[0]}: {w}x{h}, {n} colours")
    elif cmd == "svg":
        root = ET.parse(args[0]).getroot()
        if not root.tag.endswith("svg"):
            fail(f"{args[0]}: root {root.tag}")
    elif cmd == "html":
        p = Page()
        with open(args[0]) as f:
            text = f.read()
        p.feed(text)
        p.close()
        if p.stack:
            fail(f"HTML: unclosed {p.stack}")
        if p.external:
            fail(f"HTML: refers outside itself: {p.external[:3]}")
        if len(p.imgs) < int(args[1]):
            fail(f"HTML: {len(p.imgs)} images, want >= {args[1]}")
        for i, src in enumerate(p.imgs):
            head = "data:image/png;base64,"
            if not src.startswith(head):
                fail(f"HTML: image {i} is not an inline PNG")
            check_png_data(base64.b64decode(src[len(head):]), f"image {i}")
        print(f"ok: {args[0]}: {len(p.imgs)} inline images")
    elif cmd == "plant":
        with open(args[0]) as f:
            d = json.load(f)
        rows = [r for r in d["rows"] if r["busbw_gbps"] > 0]
        if args[2] == "regress":
            rows[-1]["busbw_gbps"] /= 2
        else:
            rows[0]["wrong"] = 3
        with open(args[1], "w") as f:
            json.dump(d, f, indent=1)
    else:
        fail(f"unknown check {cmd}")


main()
