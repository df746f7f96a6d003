#!/bin/bash
# options_doc.sh COLLBENCH SRCDIR - one set of options and one set of
# environment variables, wherever they are written down:
#   options: the run's option table and short options (bench/options.c),
#     `collbench --help`, the man page's OPTIONS (docs/collbench.1.scd) and
#     docs/options.md's run section list exactly the same ones; every
#     option of `topo --help` and `acceptance --help` is in docs/options.md;
#   environment: every variable the sources read (each getenv("...")
#     literal, every "COLLBENCH_..." literal, the launchers' table in
#     core/env.c; a computed getenv name only where this script knows it)
#     is in the man page's ENVIRONMENT and docs/options.md's Environment
#     and Debugging sections, and nothing is documented there that is not
#     read.
. "$(dirname "$0")/lib.sh"
src=${1:?srcdir}
"$CB" --help >"$TMP/help" || fail "--help exited $?"
"$CB" topo --help >"$TMP/topo" || fail "topo --help exited $?"
"$CB" acceptance --help >"$TMP/acc" || fail "acceptance --help exited $?"

python3 - "$src" "$TMP" <<'PY'
import os, re, sys
src, tmp = sys.argv[1], sys.argv[2]
bad = 0

def fail(msg):
    global bad
    bad += 1
    print("FAIL: " + msg)

def read(*p):
    return open(os.path.join(*p), encoding="utf-8").read()

def section(text, start, end):
    a = text.index(start)
    b = text.index(end, a + len(start)) if end else len(text)
    return text[a:b]

def same(what, want, got, wname, gname):
    if want == got:
        print(f"ok: {what}: {gname} lists the {len(want)} of {wname}")
        return
    if want - got:
        fail(f"{what}: {gname} lacks {' '.join(sorted(want - got))}")
    if got - want:
        fail(f"{what}: {gname} has {' '.join(sorted(got - want))}, "
             f"which {wname} does not")

LONG = r"--[a-z][a-z_-]+"
# ---- options ----
opts_c = read(src, "bench", "options.c")
table = set("--" + n for n in re.findall(r'\{\s*"([a-z][a-z_-]+)",\s*\w+_argument',
                                         opts_c))
m = re.search(r'#define SHORTOPTS "\+?:?([^"]*)"', opts_c)
shorts = set("-" + c for c in re.sub(r"[:+]", "", m.group(1))) if m else set()
if len(table) < 40 or len(shorts) < 15:
    fail(f"only {len(table)} long and {len(shorts)} short options found in options.c")

helptext = open(os.path.join(tmp, "help")).read()
help_long = set(re.findall(LONG, helptext))
help_short = set(re.findall(r"^  (-[a-zA-Z]),", helptext, re.M))

man = read(src, "docs", "collbench.1.scd")
man_opts = section(man, "\n# OPTIONS", "\n# TOPO OPTIONS")
man_defs = [l for l in man_opts.splitlines() if l.startswith("*-")]
man_long = set(re.findall(LONG, "\n".join(man_defs)))
man_short = set(re.findall(r"\*(-[a-zA-Z])[*,]", "\n".join(man_defs)))

md = read(src, "docs", "options.md")
md_run = section(md, "\n## The run", "\n## `collbench topo`")
cells = [r.split("|")[1] for r in md_run.splitlines()
         if r.startswith("| `-")]
md_long = set(re.findall(LONG, "\n".join(cells)))
md_short = set(re.findall(r"`(-[a-zA-Z])[` ]", "\n".join(cells)))

same("long options", table, help_long, "bench/options.c", "--help")
same("long options", table, man_long, "bench/options.c", "the man page")
same("long options", table, md_long, "bench/options.c", "docs/options.md")
same("short options", shorts, help_short, "SHORTOPTS", "--help")
same("short options", shorts, man_short, "SHORTOPTS", "the man page")
same("short options", shorts, md_short, "SHORTOPTS", "docs/options.md")
for cmd, f, head in (("topo", "topo", "\n## `collbench topo`"),
                     ("acceptance", "acc", "\n## `collbench acceptance`")):
    want = set(re.findall(LONG, open(os.path.join(tmp, f)).read()))
    part = section(md, head, "\n## ")
    lack = want - set(re.findall(LONG, part))
    if lack:
        fail(f"docs/options.md's {cmd} section lacks {' '.join(sorted(lack))}")
    else:
        print(f"ok: docs/options.md has the {len(want)} options of {cmd} --help")

# ---- environment ----
product = ["cli", "bench", "core", "coll", "select", "topo", "reports",
           "acceptance", "transports", "include"]
# getenv calls whose name is computed, and what they read (name: the
# variable documented; the test fails on any other computed name)
computed = {
    ("core/env.c", "launchers[i].rank"): "the launchers table",
    ("core/env.c", "launchers[i].world"): "the launchers table",
    ("core/env.c", "env_opts[i].env"): "the env_opts table",
    ("topo/job.c", "env"): "COLLBENCH_TOPO_XML_N",
    ("acceptance/stage.c", "env"): "COLLBENCH_SYSFS_N",
    ("bench/options.c", "flags[i]"): "the flags' literals",
}
read_vars = set()
for d in product:
    for root, _, files in os.walk(os.path.join(src, d)):
        for f in files:
            if not f.endswith((".c", ".h", ".cu")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)
            text = open(path, encoding="utf-8", errors="replace").read()
            for arg in re.findall(r"\bgetenv\s*\(\s*([^)]*?)\s*\)", text):
                lit = re.fullmatch(r'"([^"]+)"', arg)
                if lit:
                    read_vars.add(lit.group(1))
                elif (rel, arg) not in computed:
                    fail(f"{rel}: getenv({arg}): a computed name this test "
                         "does not know; document what it reads and add it "
                         "to the test's list")
            for name in re.findall(r'"(COLLBENCH_[A-Z0-9_]*?)(_%d)?"', text):
                read_vars.add(name[0] + ("_N" if name[1] else ""))
env_c = read(src, "core", "env.c")
launch = section(env_c, "launchers[] = {", "};")
read_vars |= set(re.findall(r'"([A-Z][A-Z0-9_]+)"', launch))
read_vars.discard("COLLBENCH_")
if len(read_vars) < 30:
    fail(f"only {len(read_vars)} variables found in the sources")

man_env = section(man, "\n# ENVIRONMENT", "\n# FILES")
man_vars = set(re.findall(r"\*([A-Z][A-Za-z0-9_]+)\*", man_env))
md_env = section(md, "\n## Environment", None)
md_vars = set(re.findall(r"`([A-Z][A-Za-z0-9_]+)`", md_env))
same("environment", read_vars, man_vars, "the sources", "the man page")
same("environment", read_vars, md_vars, "the sources", "docs/options.md")
for name in ("COLLBENCH_TEST_STORE_STALL_MS", "COLLBENCH_HOSTNAME"):
    if name in md_env and md_env.index(name) < md_env.find("## Debugging and testing"):
        fail(f"docs/options.md: {name} is a test hook, outside Debugging and testing")
sys.exit(1 if bad else 0)
PY
rc=$?
[ $rc -eq 0 ] && pass "options and environment agree everywhere" ||
	fail "options or environment disagree (above)"
finish
