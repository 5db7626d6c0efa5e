#!/bin/sh
# make check: README.md's list of packages is the list of scripts/deps.sh.
# README.md names them on one line that starts with "packages:", each in
# backquotes.
set -eu
want=$(sh scripts/deps.sh --list | sort | tr '\n' ' ')
have=$(grep '^packages: ' README.md | head -n 1 | grep -o '`[^`]*`' | tr -d '`' | sort | tr '\n' ' ')
if [ "$want" != "$have" ]; then
	echo "check-deps-list: README.md lists: $have" >&2
	echo "check-deps-list: scripts/deps.sh installs: $want" >&2
	exit 1
fi
echo "check-deps-list: README.md and scripts/deps.sh name the same packages"
