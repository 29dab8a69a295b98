"""Checks of executed study notebooks (tests/cli/notebook.sh).

usage: check_notebook.py NB_DIR OUT_DIR

NB_DIR holds the notebooks as export-notebook wrote them (a1, a2, b1),
OUT_DIR the same notebooks after `jupyter nbconvert --execute`:
  a1: run 1 of a.db (GPN+M, float32 states, analysed), vector extension loaded;
  a2: run 2 of a.db (float16 states, not analysed), no extension (numpy path);
  b1: run 1 of b.db (a GPN: no memory heads, analysed).
Every number checked here is read from the store with sqlite3 (and struct /
numpy for the state BLOBs), independently of the notebook's own code.
"""
import math
import os
import re
import sqlite3
import struct
import sys

import nbformat
import numpy as np

nb_dir, out_dir = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL:', what)


def load(name, executed):
    path = os.path.join(out_dir if executed else nb_dir, name + '.ipynb')
    nb = nbformat.read(path, as_version=4)
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as e:
        check(False, f'{path} does not validate: {e}')
    return nb


def outputs(nb, cell_id=None):
    """The text of every output (of one cell), and the number of PNG images."""
    text, images = [], 0
    for c in nb.cells:
        if c.cell_type != 'code' or (cell_id and c.get('id') != cell_id):
            continue
        for o in c.get('outputs', []):
            if o.output_type == 'stream':
                text.append(o.text)
            elif o.output_type in ('display_data', 'execute_result'):
                text.append(o.data.get('text/plain', ''))
                images += 'image/png' in o.data
            elif o.output_type == 'error':
                check(False, f'cell {c.get("id")} raised {o.ename}: {o.evalue}')
    return '\n'.join(text), images


def stored_repr(v):
    return repr(int(v)) if float(v).is_integer() else repr(v)


def scalar(con, run, analysis, key):
    row = con.execute('SELECT s.value FROM analysis_scalars s JOIN analyses a ON a.id = s.analysis_id'
                      ' WHERE a.run_id = ? AND a.name = ? AND s.key = ? ORDER BY a.id DESC LIMIT 1',
                      (run, analysis, key)).fetchone()
    return None if row is None else row[0]


def state_norms(con, run, bucket):
    """Mean norm of the 'pred' states per position bucket, from the BLOBs with struct."""
    sums = {}
    for pos, dtype, blob in con.execute("SELECT position, dtype, vector FROM states WHERE run_id = ? AND kind = 'pred'",
                                        (run,)):
        if dtype == 'f16':
            v = np.array(struct.unpack(f'<{len(blob) // 2}e', blob), dtype=np.float64)
        else:
            v = np.array(struct.unpack(f'<{len(blob) // 4}f', blob), dtype=np.float64)
        b = (pos // bucket) * bucket
        n, s = sums.get(b, (0, 0.0))
        sums[b] = (n + 1, s + math.sqrt(float(v @ v)))
    return {b: (n, s / n) for b, (n, s) in sorted(sums.items())}


def table_rows(text, ncols):
    """Numeric rows of a printed DataFrame: lines 'index v1 v2 ...' with ncols values."""
    rows = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == ncols + 1 and all(re.fullmatch(r'-?[0-9.eE+-]+', p) for p in parts):
            rows.append([float(p) for p in parts[1:]])
    return rows


def check_norm_table(nb, con, run, label):
    seq_len = con.execute('SELECT seq_len FROM runs WHERE id = ?', (run,)).fetchone()[0]
    want = state_norms(con, run, max(1, seq_len // 8))
    text, _ = outputs(nb, 'sql-state-norms')
    got = {int(r[0]): (int(r[1]), r[2]) for r in table_rows(text, 3)}
    check(set(got) == set(want), f'{label}: state-norm buckets {sorted(got)} vs {sorted(want)}')
    for b, (n, mean) in want.items():
        if b in got:
            check(got[b][0] == n and abs(got[b][1] - mean) <= 0.6e-4 * max(1.0, abs(mean)),
                  f'{label}: bucket {b}: notebook {got[b]}, store {(n, round(mean, 4))}')


# ---- a1: the full study ----
a = sqlite3.connect('a.db')
for name in ('a1', 'a2', 'b1'):
    load(name, executed=False)
nb = load('a1', executed=True)
text, images = outputs(nb)
check(nb.metadata['gpnscope']['store'] == '../a.db', 'a1: the store is named relative to the notebook')
# the sections are numbered 1, 2, 3, ... in the order they come (no 8a, 8b before 8)
numbers = [int(m.group(1)) for c in nb.cells if c.cell_type == 'markdown'
           for m in [re.match(r'## (\d+)\. ', c.source)] if m]
check(numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 10, f'a1: section numbers in order: {numbers}')
check('vector functions loaded from' in text, 'a1: the vector extension was loaded')
for analysis, key in (('geometry', 'participation_ratio'), ('geometry', 'stable_rank'), ('geometry', 'norm_mean'),
                      ('geometry', 'corr_mean_abs'), ('default_direction', 'batch_cos_mean'),
                      ('default_direction', 'norm_ratio'), ('horizons', 'content_horizon_e'), ('horizons', 'c1'),
                      ('retention', 'separation'), ('retention', 'slow_max'), ('probe', 'probe_horizon'),
                      ('geometry', 'components_90')):
    v = scalar(a, 1, analysis, key)
    check(v is not None, f'a1: the store has {analysis}.{key}')
    if v is not None:
        check(stored_repr(v) in text, f'a1: {analysis}.{key} = {stored_repr(v)} is in the outputs')
for cell in ('geometry', 'default-tokens', 'emergence', 'horizons', 'probe'):
    check(outputs(nb, cell)[1] == 1, f'a1: the figure of cell {cell} was drawn')
check(images >= 5, f'a1: {images} figures')
check('the top 10 of logits_bar are the stored default tokens: True' in text, 'a1: the default tokens agree')
heads_text, _ = outputs(nb, 'sql-head-decay')
for head, mean_alpha in a.execute('SELECT head, round(avg(alpha), 4) FROM head_steps WHERE run_id = 1 AND alpha > 0'
                                  ' GROUP BY head ORDER BY head'):
    check(f'{mean_alpha:.4f}' in heads_text, f'a1: mean alpha of head {head} ({mean_alpha:.4f}) is in the SQL output')
check_norm_table(nb, a, 1, 'a1')
diffs = [float(x) for x in re.findall(r'relative difference ([0-9.e+-]+)', text)]
check(len(diffs) == 2 and max(diffs) < 1e-9, f'a1: numpy recomputes the stored numbers: {diffs}')
loss_text, _ = outputs(nb, 'sql-loss')
n_tokens = a.execute('SELECT count(*) FROM tokens WHERE run_id = 1').fetchone()[0]
check(sum(int(r[1]) for r in table_rows(loss_text, 5)) == n_tokens, 'a1: the loss table covers every token')

# section 9: the newest patch, steer and lens experiments of a.db, read here with sqlite3
ex_text, ex_images = outputs(nb, 'experiments')
check(ex_images == 2, f'a1: section 9 drew {ex_images} figures, not 2 (the patching heatmap, the steering curve)')
pid = a.execute("SELECT max(id) FROM causal_experiments WHERE kind = 'patch'").fetchone()[0]
toks = [t for (t,) in a.execute("SELECT j.value FROM causal_experiments e, json_each(e.settings, '$.clean_tokens') j"
                                " WHERE e.id = ? ORDER BY j.key", (pid,))]
header = [line.split() for line in ex_text.splitlines() if line.split()[:2] == ['0', toks[0] if toks else '?']]
check(len(toks) > 0 and header and header[0] == [x for p, t in enumerate(toks) for x in (str(p), t)] + ['all'],
      f'a1: the patching table is labelled by pair 0\'s clean prompt {toks}: {header[:1]}')
for comp in ('state', 'head:0'):
    want = [f'{v:.3f}' for (v,) in a.execute('SELECT mean_score FROM patch_summary WHERE experiment_id = ? AND component = ?'
                                              ' ORDER BY position < 0, position', (pid, comp))]
    got = [line.split()[1:] for line in ex_text.splitlines() if line.split()[:1] == [comp]]
    check(got and got[0] == want, f'a1: patching row {comp}: notebook {got[:1]}, store {want}')
sid = a.execute("SELECT max(id) FROM causal_experiments WHERE kind = 'steer'").fetchone()[0]
for c, d in a.execute('SELECT c, delta_nll FROM steer_results WHERE experiment_id = ? ORDER BY c', (sid,)):
    check(f'{d:.6f}' in ex_text, f'a1: steering at c = {c}: the NLL change {d:.6f} is in the outputs')
lid = a.execute("SELECT max(id) FROM causal_experiments WHERE kind = 'lens'").fetchone()[0]
for (site,) in a.execute('SELECT DISTINCT site FROM lens_tokens WHERE experiment_id = ?', (lid,)):
    want = [site] + [p if p is not None else f'#{t}' for t, p in a.execute(
        'SELECT token_id, piece FROM lens_tokens WHERE experiment_id = ? AND site = ? AND rank = 0 ORDER BY position',
        (lid, site))]
    check(want in [line.split() for line in ex_text.splitlines()], f'a1: the lens row of {site} is {want}')

# ---- a2: float16 states, no analyses, no extension ----
nb = load('a2', executed=True)
text, images = outputs(nb)
check('note: no gpnscope_vec extension was found' in text, 'a2: the missing extension is said')
check("run 2 has no 'geometry' results" in text, 'a2: a run without analyses is said so')
check(a.execute("SELECT count(*) FROM states WHERE run_id = 2 AND dtype = 'f16'").fetchone()[0] > 0,
      'a2: run 2 has float16 states')
check_norm_table(nb, a, 2, 'a2 (numpy path, float16)')

# ---- b1: a GPN ----
b = sqlite3.connect('b.db')
nb = load('b1', executed=True)
text, images = outputs(nb)
check('has no head steps: a GPN has no memory heads' in text, 'b1: no head steps is said')
check('has no retention results' in text, 'b1: no retention is said')
check(all(f'no {k} experiment in' in text for k in ('patch', 'steer', 'lens')), 'b1: a store without experiments is said')
check(outputs(nb, 'horizons')[1] == 1 and outputs(nb, 'geometry')[1] == 1, 'b1: the horizons and geometry figures')
v = scalar(b, 1, 'geometry', 'participation_ratio')
check(v is not None and stored_repr(v) in text, 'b1: the participation ratio is in the outputs')

# ---- c1: a crafted store (issue 17, item 8) ----
nb = load('c1', executed=True)  # outputs() fails any cell that raised
text, images = outputs(nb)
intro = ''.join(nb.cells[0].source)
check('<img' not in intro and '<script' not in intro and '$' not in intro, 'c1: no markup or math from the store in the intro')
check(not any(line.startswith('#') for line in intro.splitlines()[1:]), 'c1: no heading made by the store')
check(outputs(nb, 'default-tokens')[1] == 1, "c1: the default-token bars drawn with '$' pieces")
check("numpy: not shown: the settings of analysis" in text and "(geometry) are not a JSON object: '[1, 2]'" in text,
      'c1: settings that are a JSON array are said')
check('scalar(s) that are not numbers, left out: stable_rank = None' in text, 'c1: a NULL scalar is said')
check("emergence: not shown: series 'emergence' of analysis" in text and "1 y value(s) that are not numbers (the first: 'abc' at point 3)" in text,
      'c1: a text series is said')
check('3000 heads: the retention curves of the first 64' in text, 'c1: thousands of heads are said')
check("points for 3000 heads: left out of the table" in text and 'horizons: not shown' not in text,
      'c1: series of another length than the heads are said, the table still shown')
check(outputs(nb, 'geometry')[1] == 1, 'c1: the geometry figure with an infinite scalar')

print(f'{len(failures)} failures' if failures else 'all notebook checks passed')
sys.exit(1 if failures else 0)
