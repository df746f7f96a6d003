#!/bin/bash
# options_doc.sh COLLBENCH SRCDIR - one set of options and one set of
# environment variables, wherever they are written down:
#   options: the run's option table and short options (bench/options.c),
#     `collbench --help`, the man page's OPTIONS (docs/collbench.1.scd) and
#     docs/options.md's run section list exactly the same ones; every
#     option of `topo --help` and `acceptance --help` is in docs/options.md;
#   environment: every variable the product's sources read (each
#     getenv("...") literal, every "COLLBENCH_..." literal, the launchers'
#     table in core/env.c; a computed getenv name only where this script
#     knows it) is in one of the man page's ENVIRONMENT, LAUNCHER
#     ENVIRONMENT and DEBUGGING (docs/options.md: Environment, Launcher
#     environment, Debugging and testing), and nothing is documented there
#     that is not read; a launcher's variable (PMIX_*, OMPI_*, SLURM_*,
#     PMI_*, MASTER_*, RANK, WORLD_SIZE, LOCAL_RANK, MPI_LOCALRANKID) is in the launcher section and
#     only those are; the test hooks are in the debugging section.
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
# the rows of the run's option table (rows_of), each { "name", ...
rows = re.search(r"const struct cb_optrow rows\[\] = \{(.*?)\n\t\};", opts_c, re.S)
table = set("--" + n for n in re.findall(r'\{\s*"([a-z][a-z_-]+)",',
                                         rows.group(1) if rows else ""))
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
    ("core/env.c", "launchers[i].local"): "the launchers table",
    ("core/env.c", "env_opts[i].env"): "the env_opts table",
    ("bench/place.c", "env"): "COLLBENCH_TOPO_XML_N",
    ("acceptance/stage.c", "env"): "COLLBENCH_SYSFS_N",
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
            for arg in re.findall(r"\b(?:secure_)?getenv\s*\(\s*([^)]*?)\s*\)",
                                  text):
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

def names(text, pat):
    # the names a section defines: a man page's term lines (they start
    # with *), a table's first cells; not the ones its prose refers to
    if pat == MAN_NAME:
        lines = [l for l in text.splitlines() if l.startswith("*")]
    else:
        lines = [l.split("|")[1] for l in text.splitlines()
                 if l.startswith("| `")]
    return set(re.findall(pat, "\n".join(lines)))

MAN_NAME = r"\*([A-Z][A-Za-z0-9_]+)\*"
MD_NAME = r"`([A-Z][A-Za-z0-9_]+)`"
man_parts = {
    "ENVIRONMENT": section(man, "\n# ENVIRONMENT", "\n# LAUNCHER ENVIRONMENT"),
    "LAUNCHER ENVIRONMENT": section(man, "\n# LAUNCHER ENVIRONMENT",
                                    "\n# DEBUGGING"),
    "DEBUGGING": section(man, "\n# DEBUGGING", "\n# FILES"),
}
md_parts = {
    "Environment": section(md, "\n## Environment", "\n## Launcher environment"),
    "Launcher environment": section(md, "\n## Launcher environment",
                                    "\n## Debugging and testing"),
    "Debugging and testing": section(md, "\n## Debugging and testing", None),
}
LAUNCHER = re.compile(r"(PMIX_|PMI_|OMPI_|SLURM_|MASTER_)[A-Za-z0-9_]+|RANK|"
                      r"WORLD_SIZE|LOCAL_RANK|MPI_LOCALRANKID")
HOOK = re.compile(r"COLLBENCH_(TEST_[A-Z0-9_]+|HOSTNAME|REPRODUCIBLE|"
                  r"TOPO_XML_N|SYSFS_[A-Z0-9_]+|GPU_LIBCUDA)")
launcher_vars = {v for v in read_vars if LAUNCHER.fullmatch(v)}
hook_vars = {v for v in read_vars if HOOK.fullmatch(v)}
if len(launcher_vars) < 12 or len(hook_vars) < 6:
    fail(f"only {len(launcher_vars)} launcher variables and {len(hook_vars)} "
         "test hooks found in the sources")
for doc, parts, pat in (("the man page", man_parts, MAN_NAME),
                        ("docs/options.md", md_parts, MD_NAME)):
    env_s, launch_s, debug_s = (names(t, pat) for t in parts.values())
    e, l, d = parts.keys()
    same("environment", read_vars, env_s | launch_s | debug_s, "the sources",
         f"{doc} ({e}, {l}, {d})")
    for a, b, an, bn in ((env_s, launch_s, e, l), (env_s, debug_s, e, d),
                         (launch_s, debug_s, l, d)):
        if a & b:
            fail(f"{doc}: {' '.join(sorted(a & b))} in both {an} and {bn}")
    same("launcher variables", launcher_vars, launch_s, "the sources",
         f"{doc}'s {l}")
    if hook_vars - debug_s:
        fail(f"{doc}: the test hooks {' '.join(sorted(hook_vars - debug_s))} "
             f"are outside {d}")
    else:
        print(f"ok: {doc}'s {d} has the {len(hook_vars)} test hooks")
    if "--schedule-log" not in parts[d]:
        fail(f"{doc}: --schedule-log, a test hook, is not in {d}")
sys.exit(1 if bad else 0)
PY
rc=$?
[ $rc -eq 0 ] && pass "options and environment agree everywhere" ||
	fail "options or environment disagree (above)"
finish
