#!/bin/bash
# benchmarks/need.sh - sourced by the benchmark scripts: need PACKAGE TEST...
# runs TEST (a command line); when it fails, installs Debian's PACKAGE with
# apt-get (as root; with sudo otherwise), saying so on stderr, and runs TEST
# again.  Returns 1, with one line saying what is missing, when it still
# fails (no apt, no root, no network): the caller then skips that anchor.
need() {
	local pkg=$1
	shift
	"$@" >/dev/null 2>&1 && return 0
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	if command -v apt-get >/dev/null && { [ -z "$sudo" ] || command -v sudo >/dev/null; }; then
		echo "${0##*/}: installing $pkg (apt-get install $pkg)" >&2
		$sudo apt-get update -qq >/dev/null 2>&1
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null 2>&1
	fi
	"$@" >/dev/null 2>&1 && return 0
	echo "${0##*/}: needs Debian's $pkg (apt-get install $pkg); skipped" >&2
	return 1
}
