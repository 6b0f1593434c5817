#!/usr/bin/env bash
# check-test.sh NN SPEC 'test name pattern': the survivor's test passes on the clean checkout and fails with
# bug-NN.patch applied (then reverted).
top=$(git rev-parse --show-toplevel)
cd "$top" || exit 2
n=$1 spec=$2 name=$3
patch="$top/etc/plants/round-ac/bug-$n.patch"
run() { REDIS_URL=redis://127.0.0.1:6379 NODE_OPTIONS=--experimental-vm-modules timeout 600 npx jest --maxWorkers=1 --testMatch "<rootDir>/$spec" -t "$name" > "/tmp/qac-check-$n-$1.log" 2>&1; }
run clean; clean=$?
git apply "$patch" || exit 2
run bug; bug=$?
git apply -R "$patch"
echo "bug-$n: clean $( [ $clean -eq 0 ] && echo passes || echo FAILS ), with the bug $( [ $bug -eq 0 ] && echo passes || echo FAILS ) ($(grep -E '^Tests:' /tmp/qac-check-$n-bug.log))"
