#!/usr/bin/env python3
"""links.py SOURCE_ROOT - the user guide holds together.

For README.md and every docs/*.md:
  - every relative link [text](target) resolves to a file or folder of the
    repository, and a #fragment to a heading of the page it names (GitHub's
    anchors: lower case, punctuation dropped, spaces to hyphens); links in
    code blocks and code spans are not links;
  - every repository path named in a code span (`benchmarks/anchors.py`,
    `tests/integration/chaos.py`, `coll/ring.c`) exists, so a page cannot
    cite a script or file that is gone;
  - nothing points outside the repository (`../shared`, an absolute path);
and README.md stays a five-minute read: at most 200 lines, and it links
to every page of docs/.
One line per problem; exit 0 when there is none, 1 otherwise.
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
# Folders of the repository whose files a code span may name.
TOP = ("bench", "acceptance", "select", "coll", "core", "transports", "topo", "reports",
       "include", "tests", "tools", "benchmarks", "docs")
LINK = re.compile(r"(?<!\!)\[([^\]]*)\]\(([^)\s]+)\)")
IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")
SPAN = re.compile(r"`([^`\n]+)`")
problems = []


def pages():
    out = [os.path.join(ROOT, "README.md")]
    d = os.path.join(ROOT, "docs")
    out += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".md"))
    return out


def split(text):
    """(prose lines, code-span texts) of a markdown page: fenced blocks out,
    each line's code spans out of the prose and into the second list."""
    prose, spans, fenced = [], [], False
    for n, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        spans += [(n, m.group(1)) for m in SPAN.finditer(line)]
        prose.append((n, SPAN.sub("``", line)))
    return prose, spans


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[`*_]", "", s)
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    text = open(path, encoding="utf-8").read()
    out, seen, fenced = set(), {}, False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced:
            continue
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            s = slug(m.group(1))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else f"{s}-{k}")
    return out


def rel(path):
    return os.path.relpath(path, ROOT)


def check_link(page, n, target):
    where = f"{rel(page)}:{n}"
    if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
        return
    path, _, frag = target.partition("#")
    if path.startswith("/"):
        problems.append(f"{where}: link to an absolute path {target}")
        return
    dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
    if not (dest + os.sep).startswith(ROOT + os.sep) and dest != ROOT:
        problems.append(f"{where}: link {target} leaves the repository")
        return
    if not os.path.exists(dest):
        problems.append(f"{where}: link {target}: no such file {rel(dest)}")
        return
    if frag and dest.endswith(".md") and frag not in anchors(dest):
        problems.append(f"{where}: link {target}: {rel(dest)} has no heading #{frag}")


def check_span(page, n, span):
    where = f"{rel(page)}:{n}"
    if "../shared" in span:
        problems.append(f"{where}: `{span}` points outside the repository")
    for word in span.split():
        word = word.strip("()[],;:'\"")
        first = word.split("/")[0]
        if "/" not in word or first not in TOP or re.search(r"[*?<>{}$|]|\.\.\.|[A-Z]{3,}", word):
            continue
        # a file (has an extension) or a folder (ends in /) of the repository
        if not (re.search(r"\.[a-z0-9]+$", word) or word.endswith("/")):
            continue
        path = word.split(":")[0]
        if not os.path.exists(os.path.join(ROOT, path)):
            problems.append(f"{where}: `{word}`: no such path in the repository")


def main():
    all_pages = pages()
    for page in all_pages:
        text = open(page, encoding="utf-8").read()
        prose, spans = split(text)
        # a link's text may run over a line break: match on the whole prose
        body = "\n".join(line for _, line in prose)
        starts = [n for n, _ in prose]
        for m in list(LINK.finditer(body)) + list(IMAGE.finditer(body)):
            check_link(page, starts[body.count("\n", 0, m.start())], m.group(2))
        for n, line in prose:
            if "../shared" in line:
                problems.append(f"{rel(page)}:{n}: points outside the repository (../shared)")
        for n, span in spans:
            check_span(page, n, span)
    readme = open(all_pages[0], encoding="utf-8").read()
    lines = readme.count("\n")
    if lines > 200:
        problems.append(f"README.md: {lines} lines, more than 200")
    linked = {os.path.normpath(os.path.join(ROOT, m.group(2).partition("#")[0]))
              for m in LINK.finditer(readme)}
    for page in all_pages[1:]:
        if os.path.basename(page) != "README.md" and page not in linked:
            problems.append(f"README.md: does not link to {rel(page)}")
    for p in problems:
        print(p)
    print(f"{len(all_pages)} pages checked: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
