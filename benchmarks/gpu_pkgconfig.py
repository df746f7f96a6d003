#!/usr/bin/env python3
"""gpu_pkgconfig.py - just enough pkg-config for meson to find libraries
unpacked from .deb files into a folder (SYSROOT), on a machine that has
neither them nor pkg-config (the GPU machine: no package registry there).

benchmarks/gpu-check.sh points meson at it with PKG_CONFIG; it reads the
.pc files under $GPU_SYSROOT/usr/lib/*/pkgconfig and
$GPU_SYSROOT/usr/share/pkgconfig, moves their /usr prefix into SYSROOT,
and answers --version, --modversion, --exists, --cflags, --libs and
--variable=NAME for the packages it finds there (Requires are followed).
Anything it does not know is "not found" (exit 1), as pkg-config says.
"""
import glob
import os
import re
import sys

ROOT = os.environ.get("GPU_SYSROOT", "")


def pc_files():
    found = {}
    for d in glob.glob(os.path.join(ROOT, "usr/lib/*/pkgconfig")) + \
            [os.path.join(ROOT, "usr/share/pkgconfig")]:
        for f in glob.glob(os.path.join(d, "*.pc")):
            found[os.path.basename(f)[:-3]] = f
    return found


def parse(path):
    var, fields = {}, {}

    def expand(s):
        return re.sub(r"\$\{(\w+)\}", lambda m: var.get(m.group(1), ""), s)

    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^(\w+)=(.*)$", line)
        if m:
            val = expand(m.group(2).strip())
            if val.startswith("/usr"):  # the .deb's prefix, now ROOT's
                val = ROOT + val
            var[m.group(1)] = val
            continue
        m = re.match(r"^([\w.]+):\s*(.*)$", line)
        if m:
            fields[m.group(1)] = expand(m.group(2).strip())
    return var, fields


def main(argv):
    pcs = pc_files()
    opts = [a for a in argv if a.startswith("--")]
    names = [re.split(r"[<>=\s]", a)[0] for a in argv
             if not a.startswith("--") and a and a[0].isalpha()]
    if "--version" in opts:
        print("0.29.2")
        return 0
    out = []
    seen = set()

    def visit(name):
        if name in seen:
            return True
        seen.add(name)
        if name not in pcs:
            return False
        var, fields = parse(pcs[name])
        for req in re.split(r"[,\s]+", fields.get("Requires", "")):
            req = re.split(r"[<>=]", req)[0]
            if req and not visit(req):
                return False
        for o in opts:
            if o == "--modversion":
                out.append(fields.get("Version", "0"))
            elif o == "--cflags" or o == "--cflags-only-I":
                out.extend(fields.get("Cflags", "").split())
            elif o == "--libs" or o == "--libs-only-l" or \
                    o == "--libs-only-L":
                out.extend(fields.get("Libs", "").split())
            elif o.startswith("--variable="):
                out.append(var.get(o.split("=", 1)[1], ""))
        return True

    for n in names:
        if not visit(n):
            print(f"Package {n} was not found in {ROOT}", file=sys.stderr)
            return 1
    if out:
        print(" ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
