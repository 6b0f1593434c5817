#!/usr/bin/env python3
# usage: mk.py NN-name file <<< "old\n===\nnew"  (exact, unique replacement; writes the patch, restores the file)
import sys, subprocess
name, path = sys.argv[1], sys.argv[2]
old, new = sys.stdin.read().split('\n===\n')
new = new.rstrip('\n') if not old.endswith('\n') else new
root = '/work/wt-plant-s'
src = open(f'{root}/{path}').read()
n = src.count(old)
if n != 1: sys.exit(f'{name}: {n} matches')
open(f'{root}/{path}', 'w').write(src.replace(old, new))
d = subprocess.run(['git', '-C', root, 'diff', '--', path], capture_output=True, text=True).stdout
open(f'/work/lanes/plant-s/{name}.patch', 'w').write(d)
subprocess.run(['git', '-C', root, 'checkout', '--', path])
print(d)
