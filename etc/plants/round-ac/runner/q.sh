#!/usr/bin/env bash
# q.sh NN [spec paths...]: applies round-ac's bug-NN.patch to this checkout (clean src/), runs the given spec
# files (paths from the repository's root; default: the bug's line of suites.txt) with --bail, the src/ unit
# specs first and the test/ suites only if those pass, reverts it, and prints whether they fail.
top=$(git rev-parse --show-toplevel)
cd "$top" || exit 2
n=$1; shift
here="$top/etc/plants/round-ac"
patch="$here/bug-$n.patch"
specs="$*"
[ -n "$specs" ] || specs=$(grep "^$n " "$here/runner/suites.txt" | cut -d' ' -f2-)
git apply "$patch" || exit 2
: > "/tmp/qac-$n.log"
rc=0
for stage in 'src/' 'test/'; do
  pat=""; for s in $specs; do case $s in "$stage"*) pat="$pat <rootDir>/$s" ;; esac; done
  [ -n "$pat" ] || continue
  REDIS_URL=redis://127.0.0.1:6379 NODE_OPTIONS=--experimental-vm-modules timeout 600 npx jest --maxWorkers=1 --bail --testMatch $pat >> "/tmp/qac-$n.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || break
done
git apply -R "$patch"
if [ $rc -eq 0 ]; then echo "bug-$n: passes (SURVIVES these)"; else echo "bug-$n: FAILS: $(grep -m1 -E '^\s+● ' "/tmp/qac-$n.log" | cut -c1-150)"; fi
