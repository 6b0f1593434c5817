#!/usr/bin/env bash
# Copy of /work/shared/tools/plant for this lane. Changes: --maxWorkers=1; the suites run are the
# related ones narrowed to the folders where the touched behaviour is tested (scopes.txt, by patch
# number), because --findRelatedTests names ~207 of 232 files for any src file (a full run per patch);
# the build step only with BUILD=1 (the no-bundler element suite serves dist/); BASE=<commit> to run
# against another commit than HEAD (the "before" figures are taken at the lane's base, 93a598b).
set -u
[ $# -gt 0 ] || { echo "usage: plant.sh BUG.patch..."; exit 2; }
top=$(git rev-parse --show-toplevel) || exit 2
base=${BASE:-HEAD}
here=$(cd "$(dirname "$0")" && pwd)
caught=0; total=0
for p in "$@"; do
  p=$(cd "$(dirname "$p")" && pwd)/$(basename "$p")
  nn=$(basename "$p" | cut -c1-2)
  scope=$(awk -v n="$nn" '$1==n {print $2}' "$here/scopes.txt")
  w=$(mktemp -d)
  git -C "$top" worktree add -q --detach "$w/t" "$base" || { rm -rf "$w"; continue; }
  ln -s "$top/node_modules" "$w/t/node_modules"
  ( cd "$w/t" && git apply "$p" ) || { echo "$(basename "$p"): does not apply to HEAD"; git -C "$top" worktree remove --force "$w/t"; rm -rf "$w"; continue; }
  total=$((total+1))
  if [ "${BUILD:-0}" = 1 ] && ! (cd "$w/t" && npm run -s build >/dev/null 2>&1); then
    caught=$((caught+1)); echo "$(basename "$p"): CAUGHT by the build (typecheck)"
    git -C "$top" worktree remove --force "$w/t"; rm -rf "$w"; continue
  fi
  tests=$(cd "$w/t" && NODE_OPTIONS=--experimental-vm-modules npx jest --listTests 2>/dev/null | sed "s#^$w/t/##" | grep -E "$scope" | sort | tr '\n' ' ')
  start=$(date +%s)
  out=$(cd "$w/t" && NODE_OPTIONS=--experimental-vm-modules npx jest --runTestsByPath $tests --bail --maxWorkers=1 2>&1)
  rc=$?
  secs=$(( $(date +%s) - start ))
  n=$(echo $tests | wc -w)
  if [ $rc -eq 0 ]; then echo "$(basename "$p"): SURVIVED ($n files, ${secs}s)"
  else caught=$((caught+1)); echo "$(basename "$p"): CAUGHT by $(printf '%s\n' "$out" | grep -m1 -E '^\s+● ' | sed 's/^ *● //' | cut -c1-180) [$(printf '%s\n' "$out" | grep -m1 -E '^FAIL ' | cut -c1-100)] (${secs}s)"
    printf '%s\n' "$out" > "$here/logs/$(basename "$p" .patch).log"; fi
  git -C "$top" worktree remove --force "$w/t"; rm -rf "$w"
done
echo "$caught of $total caught"
