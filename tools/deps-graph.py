#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tools/deps-graph.py - cycles between the product's files and folders.

Two kinds of edge, from the text of the sources (no build needed):
  include  a.c or a.h has  #include "b.h"  (or <collbench/b.h>): a -> b.h
  symbol   a.c uses a name that b.c defines without `static` (a function
           or a variable; a member after `.` or `->` is not a use): a -> b.c
           (not across a transport's folder: it links apart)
Files are the C sources and headers under the product folders (not tests/,
tools/, benchmarks/); alternates that define the same names as the file they
stand in for (core/pmix_none.c, topo/none.c) are left out.  The folder graph
is the file graph rolled up to each file's folder (transports/gpu and
transports/verbs are folders of their own).

Prints each strongly connected component of more than one node, files then
folders, and exits 1 when there is one that --allow FILE does not list.  An
allowlist line is one component: its members, sorted, separated by spaces
(# comments).  A listed component that is gone, or has changed, fails too,
so the list can only shrink: remove the line when the cycle is broken.

  tools/deps-graph.py [--root DIR] [--allow FILE] [--edges]
"""
import argparse
import os
import re
import sys

FOLDERS = ["include", "core", "transports", "coll", "topo", "reports",
           "bench", "acceptance", "select", "cli"]
ALTERNATES = {"core/pmix_none.c", "topo/none.c"}

INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<(collbench/[^>]+)>)',
                     re.M)
IDENT = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = set("""auto break case char const continue default do double else
enum extern float for goto if inline int long register restrict return short
signed sizeof static struct switch typedef union unsigned void volatile while
_Bool _Atomic _Thread_local __attribute__ __typeof__ typeof""".split())


def strip(text):
    """The code without comments, strings, character constants and
    preprocessor lines (their length kept, so nothing joins)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(" ")
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append('""' if c == '"' else "0")
            i = j + 1
        elif c == "#" and (i == 0 or text[i - 1] == "\n" or
                           text[:i].rsplit("\n", 1)[-1].strip() == ""):
            # a directive, with its continuation lines
            j = i
            while True:
                k = text.find("\n", j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != "\\":
                    break
                j = k + 1
            out.append("\n")
            i = k
        else:
            out.append(c)
            i += 1
    return "".join(out)


def definitions(code):
    """Names a .c file defines without static, at file scope."""
    names, depth, head = set(), 0, []
    for tok in re.finditer(r"[{};]|[^{};]+", code):
        t = tok.group(0)
        if t == "{":
            if depth == 0:
                h = " ".join(head)
                name = defined_name(h, brace=True)
                if name:
                    names.add(name)
                head = []
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                head = []
        elif t == ";":
            if depth == 0:
                name = defined_name(" ".join(head), brace=False)
                if name:
                    names.add(name)
                head = []
        elif depth == 0:
            head.append(t)
    return names


def defined_name(head, brace):
    words = IDENT.findall(head)
    if not words or words[0] in ("typedef", "extern") or "static" in words:
        return None
    if "=" in head:
        before = head.split("=", 1)[0]
        before = re.sub(r"\[[^\]]*\]", "", before)
        ids = IDENT.findall(before)
        return ids[-1] if ids and ids[-1] not in KEYWORDS else None
    if brace:
        m = re.search(r"(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$",
                      head.strip())
        if m and m.group(1) not in KEYWORDS and \
                not head.lstrip().startswith(("struct", "enum", "union")) \
                or (m and re.match(r"\s*(struct|enum|union)\s+\w+\s*\*",
                                   head)):
            return m.group(1)
        return None
    if "(" in head or head.lstrip().startswith(("struct", "enum", "union")) \
            and re.match(r"\s*(struct|enum|union)\s+\w+\s*$", head):
        return None
    ids = IDENT.findall(re.sub(r"\[[^\]]*\]", "", head))
    return ids[-1] if len(ids) > 1 and ids[-1] not in KEYWORDS else None


def uses(code):
    """Identifiers the code names, but members (after . or ->)."""
    return {m.group(0) for m in IDENT.finditer(code)
            if not re.search(r"(\.|->)\s*$", code[max(0, m.start() - 4):
                                                  m.start()])}


def files_of(root):
    found = []
    for top in FOLDERS:
        for d, _, names in os.walk(os.path.join(root, top)):
            for f in names:
                if f.endswith((".c", ".h")):
                    rel = os.path.relpath(os.path.join(d, f), root)
                    if rel not in ALTERNATES:
                        found.append(rel)
    return sorted(found)


def resolve(root, src, inc):
    for base in (os.path.dirname(src), "include", ""):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def same_unit(f, g):
    """A transport is linked apart (a module, or its own objects reached
    through the host table and its ops), so names join files across its
    boundary only through includes."""
    tf, tg = f.startswith("transports/"), g.startswith("transports/")
    return tf == tg and (not tf or os.path.dirname(f) == os.path.dirname(g))


def graph(root):
    files = files_of(root)
    fileset = set(files)
    edges = {f: {} for f in files}
    code, defs = {}, {}
    for f in files:
        text = open(os.path.join(root, f), errors="replace").read()
        for m in INCLUDE.finditer(text):
            to = resolve(root, f, m.group(1) or m.group(2))
            if to in fileset and to != f:
                edges[f].setdefault(to, "include")
        code[f] = strip(text)
        if f.endswith(".c"):
            for name in definitions(code[f]):
                defs.setdefault(name, set()).add(f)
    for f in files:
        if not f.endswith(".c"):
            continue
        for name in uses(code[f]):
            for g in defs.get(name, ()):
                if g != f and same_unit(f, g):
                    edges[f].setdefault(g, "symbol " + name)
    return edges


def sccs(edges):
    """Tarjan, iterative; components of more than one node."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for v0 in edges:
        if v0 in index:
            continue
        work = [(v0, iter(sorted(edges[v0])))]
        index[v0] = low[v0] = n[0]
        n[0] += 1
        stack.append(v0)
        on.add(v0)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def folders(edges):
    fe = {}
    for f, tos in edges.items():
        a = os.path.dirname(f)
        fe.setdefault(a, {})
        for g, why in tos.items():
            b = os.path.dirname(g)
            if a != b:
                fe[a].setdefault(b, "%s -> %s (%s)" % (f, g, why))
    return fe


def show(kind, comps, edges):
    for c in comps:
        print("%s cycle: %s" % (kind, " ".join(c)))
        members = set(c)
        for a in c:
            for b, why in sorted(edges[a].items()):
                if b in members:
                    print("    %s -> %s: %s" % (a, b, why))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--allow", help="the cycles that may remain")
    ap.add_argument("--edges", action="store_true",
                    help="print the folder graph's edges too")
    a = ap.parse_args()
    edges = graph(a.root)
    fedges = folders(edges)
    fc, dc = sccs(edges), sccs(fedges)
    show("file", fc, edges)
    show("folder", dc, fedges)
    if a.edges:
        for x in sorted(fedges):
            print("folder %s -> %s" % (x, " ".join(sorted(fedges[x]))))
    found = {" ".join(c) for c in fc + dc}
    allowed = set()
    if a.allow:
        for line in open(a.allow):
            line = line.split("#", 1)[0].strip()
            if line:
                allowed.add(" ".join(sorted(line.split())))
    bad = sorted(found - allowed)
    gone = sorted(allowed - found)
    for c in bad:
        print("deps-graph: a cycle not in the allowlist: %s" % c)
    for c in gone:
        print("deps-graph: allowlisted cycle is gone or changed, remove "
              "or update its line: %s" % c)
    print("deps-graph: %d files, %d file cycles, %d folder cycles, "
          "%d allowed" % (len(edges), len(fc), len(dc), len(allowed)))
    return 1 if bad or gone else 0


if __name__ == "__main__":
    sys.exit(main())
