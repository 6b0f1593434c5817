#!/usr/bin/env bash
# all.sh [NN...]: q.sh for each bug named (default: every bug of suites.txt), one after the other.
here=$(dirname "$0")
ids="$*"; [ -n "$ids" ] || ids=$(cut -d' ' -f1 "$here/suites.txt")
for n in $ids; do "$here/q.sh" "$n"; done
