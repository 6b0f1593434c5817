#!/usr/bin/env bash
# q.sh NN <spec paths...>: applies round-ab's bug-NN.patch to this checkout (clean, at a1c1da06 or later), runs the
# given spec files (paths from the repository's root) with --bail, reverts it, and prints whether they fail.
top=$(git rev-parse --show-toplevel)
cd "$top" || exit 2
n=$1; shift
patch="$top/etc/plants/round-ab/bug-$n.patch"
git apply "$patch" || exit 2
pat=""; for s in "$@"; do pat="$pat <rootDir>/$s"; done
REDIS_URL=redis://127.0.0.1:6379 NODE_OPTIONS=--experimental-vm-modules timeout 300 npx jest --maxWorkers=1 --bail --testMatch $pat > "/tmp/q-$n.log" 2>&1
rc=$?
git apply -R "$patch"
if [ $rc -eq 0 ]; then echo "bug-$n: passes (SURVIVES these)"; else echo "bug-$n: FAILS: $(grep -m1 -E '^\s+● ' "/tmp/q-$n.log" | cut -c1-150)"; fi
