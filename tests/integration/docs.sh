#!/bin/bash
# docs.sh COLLBENCH VERSION MANPAGE COMPLETION BUILDDIR - what people expect
# of a command-line tool: `collbench --version` says meson's project
# version; the man page (built by scdoc; "" when this build has none)
# renders without a warning and documents every option and command that
# --help lists; bash completion offers every option --help lists, every
# algorithm `collbench info` lists, the commands, and values inside comma
# lists; `meson install` puts both where man and bash-completion look.
. "$(dirname "$0")/lib.sh"
version=${1:?version} man=${2?manpage} comp=${3:?completion} build=${4:?builddir}

got=$("$CB" --version)
[ "$got" = "collbench $version" ] && pass "--version: $got" ||
	fail "--version says '$got', meson's project version is $version"

# Every long option of the run and of topo, as --help lists them.
"$CB" --help >"$TMP/help" || fail "--help exited $?"
grep -oE -- '--[a-z][a-z_-]+' "$TMP/help" | sort -u >"$TMP/opts"
"$CB" topo --help | grep -oE -- '--[a-z][a-z_-]+' | sort -u >"$TMP/topo_opts"
"$CB" acceptance --help | grep -oE -- '--[a-z][a-z_-]+' | sort -u >"$TMP/acc_opts"
[ "$(wc -l <"$TMP/opts")" -gt 30 ] || fail "only $(wc -l <"$TMP/opts") options in --help"
cmds="run info topo acceptance plot compare report"

if [ -z "$man" ]; then
	echo "note: this build has no man page (scdoc not found)"
else
	# groff -ww: every warning; -z: no output, only the diagnostics
	warn=$(groff -man -Tutf8 -ww -z "$man" 2>&1)
	[ -z "$warn" ] && pass "man page renders without warnings" ||
		fail "groff warns: $(echo "$warn" | head -3)"
	MANWIDTH=200 man -l "$man" 2>/dev/null | col -b >"$TMP/man.txt"
	missing=""
	for o in $(cat "$TMP/opts" "$TMP/topo_opts" "$TMP/acc_opts" | sort -u) $cmds; do
		grep -qF -- "$o" "$TMP/man.txt" || missing="$missing $o"
	done
	[ -z "$missing" ] && pass "man page documents every option and command" ||
		fail "man page lacks:$missing"
	grep -q "EXIT STATUS" "$TMP/man.txt" && grep -qw 77 "$TMP/man.txt" ||
		fail "man page has no EXIT STATUS with 77"
fi

# Completion: what bash would offer for the words so far.
complete_words() { # WORD... (the last one is being completed)
	bash -c '
		source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_collbench; printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@"
}
offers() { # WANT WORD...: WANT is among the offers
	local want=$1
	shift
	if complete_words "$@" | grep -qxF -- "$want"; then
		pass "completion: '$*' offers $want"
	else
		fail "completion: '$*' offers $(complete_words "$@" | tr '\n' ' '), not $want"
	fi
}
complete_words collbench -- >"$TMP/c_opts"
missing=$(comm -23 "$TMP/opts" <(sort -u "$TMP/c_opts") | tr '\n' ' ')
[ -z "$missing" ] && pass "completion offers every option of --help" ||
	fail "completion lacks: $missing"
complete_words collbench topo -- >"$TMP/c_topo"
missing=$(comm -23 "$TMP/topo_opts" <(sort -u "$TMP/c_topo") | tr '\n' ' ')
[ -z "$missing" ] && pass "completion offers every option of topo --help" ||
	fail "completion lacks for topo: $missing"
complete_words collbench acceptance -- >"$TMP/c_acc"
missing=$(comm -23 "$TMP/acc_opts" <(sort -u "$TMP/c_acc") | tr '\n' ' ')
[ -z "$missing" ] && pass "completion offers every option of acceptance --help" ||
	fail "completion lacks for acceptance: $missing"
offers acceptance collbench acc
offers pairwise,collectives collbench acceptance --stages pairwise,co
for a in $("$CB" info | awk '/^algorithms:/ {on=1; next} /^$/ {on=0} on && /^  [a-z]/ {print $1}'); do
	offers "$a" collbench --algo ""
done
offers topo collbench to
offers allreduce,broadcast collbench --coll allreduce,br
offers bfloat16 collbench -d bf
offers shm collbench --transport s
offers --format collbench topo --fo
offers --tolerance collbench compare a.json --tol
offers csv collbench --np 2 --format c
[ -z "$(complete_words collbench --np "")" ] || fail "completion offers words for --np's number"

# meson install puts both where they are looked for.
if meson install -C "$build" --no-rebuild --destdir "$TMP/root" >"$TMP/install.log" 2>&1; then
	f=$(find "$TMP/root" -path '*bash-completion/completions/collbench')
	[ -n "$f" ] && pass "installed $f" || fail "no bash completion installed"
	if [ -n "$man" ]; then
		f=$(find "$TMP/root" -path '*/man1/collbench.1')
		[ -n "$f" ] && pass "installed $f" || fail "no man page installed"
	fi
else
	fail "meson install: $(tail -3 "$TMP/install.log")"
fi
finish
