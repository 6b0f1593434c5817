# gen.py: writes ../bug-NN.patch for each bug of bugs.py against the checkout (clean src/), and suites.txt.
import os, subprocess, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from bugs import BUGS
top = subprocess.check_output(['git', 'rev-parse', '--show-toplevel'], text=True).strip()
lines = []
for i, (f, cls, what, old, new, suites) in enumerate(BUGS, 1):
    path = os.path.join(top, 'src', f)
    text = open(path).read()
    if text.count(old) != 1:
        sys.exit(f'bug {i:02}: {f}: found {text.count(old)} times: {old!r}')
    open(path, 'w').write(text.replace(old, new))
    patch = subprocess.check_output(['git', 'diff', '--', 'src/' + f], cwd=top, text=True)
    subprocess.check_call(['git', 'checkout', '--', 'src/' + f], cwd=top)
    open(os.path.join(here, '..', f'bug-{i:02}.patch'), 'w').write(patch)
    lines.append(f'{i:02} {suites}')
open(os.path.join(here, 'suites.txt'), 'w').write('\n'.join(lines) + '\n')
print(len(BUGS), 'patches')
