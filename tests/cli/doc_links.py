"""Every path in the tree that the docs cite exists (README.md, docs/*.md, and the
text the report and notebooks are generated from: plots/*.c, notebooks-export/*.c and *.py).
A path is a markdown link's target or a word starting with a top-level folder of
the project. Placeholders (<family>, {i}, *, NAME) are skipped; `[ch]` is a glob;
paths that are meant not to be in the tree (outputs of commands, other projects'
files) are listed with their reason in tests/cli/doc_links.allow."""
import glob, os, re, sys

root = sys.argv[1]
files = [os.path.join(root, 'README.md')] + sorted(glob.glob(os.path.join(root, 'docs', '*.md')))
files += sorted(glob.glob(os.path.join(root, 'plots', '*.c')) + glob.glob(os.path.join(root, 'notebooks-export', '*.c'))
         + glob.glob(os.path.join(root, 'notebooks-export', '*.py')))
tops = ('docs tests scripts engine analyses cli store plots notebooks-export bench tools configs models probes record '
        'base parallel examples python').split()
allowed = {}
for line in open(os.path.join(root, 'tests', 'cli', 'doc_links.allow'), encoding='utf-8'):
    if line.strip() and not line.startswith('#'):
        path, _, why = line.strip().partition(' ')
        allowed[path] = why.strip()
word = re.compile(r'(?<![\w./-])((?:%s)/[\w./+\[\]-]*)' % '|'.join(re.escape(t) for t in tops))
link = re.compile(r'\]\(([^)#\s]+)(?:#[^)]*)?\)')
missing, seen_allowed, n = [], set(), 0
for f in files:
    text = open(f, encoding='utf-8').read()
    cands = []
    if f.endswith('.md'):
        for m in link.finditer(text):
            if not re.match(r'[a-z]+:', m.group(1)):
                cands.append((m.start(), os.path.relpath(os.path.normpath(os.path.join(os.path.dirname(f), m.group(1))), root)))
    for m in word.finditer(text):
        if text[m.end():m.end() + 1] in '<{*$' or text[m.end():m.end() + 3] == '...':
            continue
        p = m.group(1).rstrip('.,;:)')
        if '[' not in p:
            p = p.rstrip(']')
        cands.append((m.start(), p.rstrip('/')))
    for at, p in cands:
        if re.search(r'[<>{}*$]|(?<![a-z])[A-Z]{3,}(?![a-z])', p):
            continue
        n += 1
        if p in allowed:
            seen_allowed.add(p)
        elif not glob.glob(os.path.join(root, p)):
            missing.append('%s:%d: %s' % (os.path.relpath(f, root), text.count('\n', 0, at) + 1, p))
stale = sorted(set(allowed) - seen_allowed)
for m in missing:
    print('missing:', m)
for s in stale:
    print('doc_links.allow names a path no doc cites any more:', s)
print('%d paths checked, %d missing, %d stale allowances' % (n, len(missing), len(stale)))
sys.exit(1 if missing or stale else 0)
