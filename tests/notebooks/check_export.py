"""Checks of `gpnscope export` output against the store (tests/cli/export.sh).

usage: check_export.py STORE RUN CSV_DIR NPY_DIR

Every value is read back from the store independently, with sqlite3 and
struct (state BLOBs) or numpy.frombuffer (analysis vectors), and compared
exactly: .npy files through numpy.load, CSV files through pandas (and the csv
module for the quoting of token text).
"""
import csv
import json
import math
import os
import sqlite3
import struct
import sys

import numpy as np

store, run, csv_dir, npy_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
con = sqlite3.connect(store)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL:', what)


def blob_f32(dtype, blob):
    n = len(blob) // (2 if dtype == 'f16' else 4)
    return np.array(struct.unpack(f"<{n}{'e' if dtype == 'f16' else 'f'}", blob), dtype=np.float32)


def manifest(folder):
    m = json.load(open(os.path.join(folder, 'manifest.json')))
    listed = {f['file'] for f in m['files']}
    present = set(os.listdir(folder)) - {'manifest.json'}
    check(listed == present, f'{folder}: the manifest lists {sorted(listed ^ present)} wrongly')
    check(not any('.tmp.' in f for f in present), f'{folder}: temporary files left')
    check(m['run'] == run and m['format'] in ('csv', 'npy'), f'{folder}: manifest run and format')
    return m


kinds = [k for (k,) in con.execute('SELECT DISTINCT kind FROM states WHERE run_id = ? ORDER BY kind', (run,))]
check(len(kinds) == 2, f'the store has pred and ground states: {kinds}')

# ---------------- npy ----------------
m = manifest(npy_dir)
shapes = {f['file']: f.get('shape') for f in m['files']}
for name in os.listdir(npy_dir):
    if name.endswith('.npy'):
        with open(os.path.join(npy_dir, name), 'rb') as f:
            head = f.read(10)
        hlen = head[8] | head[9] << 8
        check(head[:8] == b'\x93NUMPY\x01\x00' and (10 + hlen) % 64 == 0, f'{name}: a version 1.0 header, aligned')
        a = np.load(os.path.join(npy_dir, name), allow_pickle=False)
        check(list(a.shape) == shapes[name], f'{name}: shape {a.shape} vs manifest {shapes[name]}')
        check(a.flags.c_contiguous and a.dtype.str in ('<f4', '<i4'), f'{name}: C order, <f4 or <i4 ({a.dtype.str})')

for kind in kinds:
    rows = con.execute('SELECT window, position, dtype, vector FROM states WHERE run_id = ? AND kind = ?'
                       ' ORDER BY window, position', (run, kind)).fetchall()
    S = np.load(os.path.join(npy_dir, f'states_{kind}.npy'))
    W = np.load(os.path.join(npy_dir, f'states_{kind}_window.npy'))
    P = np.load(os.path.join(npy_dir, f'states_{kind}_position.npy'))
    want = np.stack([blob_f32(dt, b) for _, _, dt, b in rows])
    check(S.dtype == np.float32 and S.shape == want.shape and np.array_equal(S, want),
          f'states_{kind}.npy equals the stored vectors ({S.shape} vs {want.shape})')
    check(np.array_equal(W, [r[0] for r in rows]) and np.array_equal(P, [r[1] for r in rows]),
          f'states_{kind}: windows and positions')

steps = con.execute('SELECT window, position, head, alpha, beta, mem_norm FROM head_steps WHERE run_id = ?',
                    (run,)).fetchall()
wins = sorted({s[0] for s in steps})
T, H = max(s[1] for s in steps) + 1, max(s[2] for s in steps) + 1
check(np.array_equal(np.load(os.path.join(npy_dir, 'heads_window.npy')), wins), 'heads_window.npy')
for col, name in ((3, 'alpha'), (4, 'beta'), (5, 'mem_norm')):
    want = np.full((len(wins), T, H), np.nan, dtype=np.float32)
    for s in steps:
        if s[col] is not None:
            want[wins.index(s[0]), s[1], s[2]] = s[col]
    got = np.load(os.path.join(npy_dir, f'{name}.npy'))
    check(got.shape == want.shape and np.array_equal(got, want, equal_nan=True), f'{name}.npy equals head_steps')
    check(np.isnan(got).sum() == np.isnan(want).sum(), f'{name}.npy: NaN exactly where no value')

tok = con.execute('SELECT window, position, token_id, next_token_id, top1, nll, entropy FROM tokens WHERE run_id = ?'
                  ' ORDER BY window, position', (run,)).fetchall()
twins = sorted({t[0] for t in tok})
TT = max(t[1] for t in tok) + 1
for col, name, fill, dt in ((2, 'token_id', -1, np.int32), (3, 'next_token_id', -1, np.int32),
                            (4, 'top1', -1, np.int32), (5, 'nll', np.nan, np.float32),
                            (6, 'entropy', np.nan, np.float32)):
    want = np.full((len(twins), TT), fill, dtype=dt)
    for t in tok:
        if t[col] is not None:
            want[twins.index(t[0]), t[1]] = t[col]
    got = np.load(os.path.join(npy_dir, f'tokens_{name}.npy'))
    check(got.dtype == dt and np.array_equal(got, want, equal_nan=dt == np.float32), f'tokens_{name}.npy')

for aid, aname, key, blob in con.execute('SELECT a.id, a.name, v.key, v.vector FROM analysis_vectors v'
                                         ' JOIN analyses a ON a.id = v.analysis_id WHERE a.run_id = ?', (run,)):
    got = np.load(os.path.join(npy_dir, f'analysis_{aid}_{aname}_{key}.npy'))
    check(np.array_equal(got, np.frombuffer(blob, dtype='<f4')), f'analysis vector {aname}.{key}')

# ---------------- csv ----------------
manifest(csv_dir)
try:
    import pandas as pd
except ImportError:
    pd = None
    print('SKIPPED (visibly): no pandas; the CSV files are checked with the csv module only')

# pandas reads doubles exactly only with float_precision='round_trip'; empty fields (SQL NULL) are
# missing, and nothing else is (a piece may be 'NA' or 'null')
exact = dict(float_precision='round_trip', keep_default_na=False, na_values=[''])

# the token text, quoting and all, with the csv module (RFC 4180)
with open(os.path.join(csv_dir, 'tokens.csv'), newline='') as f:
    rows = list(csv.reader(f, strict=True))
text = con.execute('SELECT window, position, token_id, piece, next_token_id, next_piece, top1, top1_piece, nll,'
                   ' entropy FROM tokens_text WHERE run_id = ? ORDER BY window, position', (run,)).fetchall()
check(rows[0] == ['window', 'position', 'token_id', 'piece', 'next_token_id', 'next_piece', 'top1', 'top1_piece',
                  'nll', 'entropy'], f'tokens.csv header {rows[0]}')
check(len(rows) - 1 == len(text), f'tokens.csv has {len(rows) - 1} rows, the store {len(text)}')
bad = 0
for r, t in zip(rows[1:], text):
    want = ['' if v is None else (repr(v) if isinstance(v, float) else str(v)) for v in t]
    got = [(repr(float(x)) if x and i in (8, 9) else x) for i, x in enumerate(r)]
    bad += got != want
    if got != want and bad < 4:
        print('  differs:', got, want)
check(bad == 0, f'tokens.csv: {bad} rows differ from tokens_text')
check(any('\n' in (t[3] or '') or ',' in (t[3] or '') for t in text), 'the test store has awkward pieces')

if pd is not None:
    df = pd.read_csv(os.path.join(csv_dir, 'tokens.csv'), **exact)
    check(len(df) == len(text), 'pandas reads every token row')
    check(all((p if isinstance(p, str) else '') == (t[3] or '') for p, t in zip(df.piece, text)),
          'pandas reads back the token text')
    check(all((math.isnan(a) and b is None) or a == b for a, b in zip(df.nll, (t[8] for t in text))),
          'pandas reads back nll exactly')
    heads = pd.read_csv(os.path.join(csv_dir, 'heads.csv'), float_precision='round_trip')
    want = pd.DataFrame(con.execute('SELECT window, position, head, alpha, beta, mem_norm FROM head_steps'
                                    ' WHERE run_id = ? ORDER BY window, position, head', (run,)).fetchall(),
                        columns=['window', 'position', 'head', 'alpha', 'beta', 'mem_norm'])
    check(heads.equals(want), 'heads.csv equals head_steps (exactly, through pandas)')
    for kind in kinds:
        s = pd.read_csv(os.path.join(csv_dir, f'states_{kind}.csv'), float_precision='round_trip')
        rows = con.execute('SELECT window, position, dtype, vector FROM states WHERE run_id = ? AND kind = ?'
                           ' ORDER BY window, position', (run, kind)).fetchall()
        want = np.stack([blob_f32(dt, b) for _, _, dt, b in rows])
        got = s.drop(columns=['window', 'position']).to_numpy().astype(np.float32)
        check(got.shape == want.shape and np.array_equal(got, want), f'states_{kind}.csv equals the stored vectors')
        check(list(s.window) == [r[0] for r in rows] and list(s.position) == [r[1] for r in rows],
              f'states_{kind}.csv windows and positions')
    has_analyses = con.execute('SELECT count(*) FROM analyses WHERE run_id = ?', (run,)).fetchone()[0] > 0
    check(has_analyses == os.path.exists(os.path.join(csv_dir, 'analysis_scalars.csv')),
          'analysis files exactly when the run has analyses')
if pd is not None and has_analyses:
    sc = pd.read_csv(os.path.join(csv_dir, 'analysis_scalars.csv'), **exact)
    want = con.execute('SELECT a.id, a.name, s.key, s.value FROM analysis_scalars s JOIN analyses a'
                       ' ON a.id = s.analysis_id WHERE a.run_id = ? ORDER BY a.id, s.key', (run,)).fetchall()
    check([tuple(r) for r in sc[['analysis_id', 'analysis', 'key', 'value']].itertuples(index=False)] ==
          [tuple(w) for w in want], 'analysis_scalars.csv equals the store')
    se = pd.read_csv(os.path.join(csv_dir, 'analysis_series.csv'), **exact)
    want = con.execute('SELECT a.id, s.series, s.idx, s.x, s.y, s.label FROM analysis_series s JOIN analyses a'
                       ' ON a.id = s.analysis_id WHERE a.run_id = ? ORDER BY a.id, s.series, s.idx', (run,)).fetchall()
    same = len(se) == len(want)
    for r, w in zip(se.itertuples(index=False), want):
        same &= (r.analysis_id, r.series, r.idx) == w[:3]
        same &= all((v is None and math.isnan(g)) or g == v for g, v in ((r.x, w[3]), (r.y, w[4])))
        same &= (r.label if isinstance(r.label, str) else None) == w[5]
    check(same, 'analysis_series.csv equals the store (labels included)')
    ve = pd.read_csv(os.path.join(csv_dir, 'analysis_vectors.csv'), float_precision='round_trip')
    for (aid, key), g in ve.groupby(['analysis_id', 'key']):
        blob = con.execute('SELECT vector FROM analysis_vectors WHERE analysis_id = ? AND key = ?',
                           (int(aid), key)).fetchone()[0]
        check(np.array_equal(g.sort_values('idx').value.to_numpy().astype(np.float32),
                             np.frombuffer(blob, dtype='<f4')), f'analysis_vectors.csv {key}')

print(f'{len(failures)} failures' if failures else 'all export checks passed')
sys.exit(1 if failures else 0)
