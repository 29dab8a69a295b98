#!/usr/bin/env bash
# gpnscope import: .npy traces written by numpy come back from the store
# value for value (f32 exactly, f16 exactly as halves, f32 -> f16 within half
# precision), with tokens, next tokens, unigram counts, alpha/beta per head,
# the model's sha256 and a complete run.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir cli_import; cd "$dir"

"$py" - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
N, T, d, H = 3, 11, 24, 5
s = rng.standard_normal((N, T, d)).astype('<f4') * 10
s[0, 0, 0] = np.float32(1e-30)            # tiny, exact in f32
np.save('states.npy', s)
np.save('states_f2.npy', s.astype('<f2'))
np.save('states_f8.npy', s.astype('<f8'))
np.save('tokens.npy', rng.integers(0, 300, (N, T)).astype('<i4'))
np.save('tokens_u2.npy', np.load('tokens.npy').astype('<u2'))
np.save('alpha.npy', rng.uniform(0, 1, (N, T, H)).astype('<f4'))
np.save('beta.npy', rng.uniform(0, 1, (N, T, H)).astype('<f8'))
open('model.bin', 'wb').write(b'pretend checkpoint')
PY

"$bin" import --db a.db --states states.npy --tokens tokens.npy --alpha alpha.npy --beta beta.npy --model model.bin > out.txt
grep -q "imported run 1 into a.db: 3 windows x 11 positions, 33 pred states (f32, d=24), tokens, alpha, beta" out.txt
"$bin" import --db a.db --states states_f2.npy --tokens tokens_u2.npy --kind ground > /dev/null          # run 2: f16 kept
"$bin" import --db a.db --states states.npy --dtype f16 > /dev/null                                       # run 3: f32 -> f16
"$bin" import --db a.db --states states_f8.npy --alpha alpha.npy > /dev/null                              # run 4: f8 -> f32
sha=$(sha256sum model.bin | cut -d' ' -f1)

"$py" - "$sha" <<'PY'
import sqlite3, sys
import numpy as np
con = sqlite3.connect('a.db')
q = lambda sql, *a: con.execute(sql, a).fetchall()
s = np.load('states.npy'); tok = np.load('tokens.npy'); al = np.load('alpha.npy'); be = np.load('beta.npy')
N, T, d = s.shape
def states(run, kind='pred'):
    rows = q("SELECT window, position, dtype, vector FROM states WHERE run_id = ? AND kind = ? ORDER BY window, position", run, kind)
    assert len(rows) == N * T, len(rows)
    assert [(w, p) for w, p, _, _ in rows] == [(w, p) for w in range(N) for p in range(T)]
    return [r[2] for r in rows], np.stack([np.frombuffer(r[3], dtype='<f4' if r[2] == 'f32' else '<f2') for r in rows]).reshape(N, T, d)
dt, got = states(1)
assert set(dt) == {'f32'} and np.array_equal(got, s), 'f32 states differ'
dt, got = states(2, 'ground')
assert set(dt) == {'f16'} and np.array_equal(got, s.astype('<f2')), 'f16 states differ'
dt, got = states(3)
assert set(dt) == {'f16'} and np.array_equal(got, s.astype('<f2')), 'f32 -> f16 is numpy rounding'
assert np.allclose(got.astype('<f4'), s, rtol=2**-11, atol=1e-7), 'within half precision'
dt, got = states(4)
assert np.array_equal(got, s), 'f8 -> f32'
# tokens and their next tokens
rows = q("SELECT window, position, token_id, next_token_id, nll, top1 FROM tokens WHERE run_id = 1 ORDER BY window, position")
assert [r[2] for r in rows] == tok.ravel().tolist()
assert [r[3] for r in rows] == [int(tok[w, t + 1]) if t + 1 < T else None for w in range(N) for t in range(T)]
assert all(r[4] is None and r[5] is None for r in rows)
assert q("SELECT count(*) FROM tokens WHERE run_id = 3") == [(0,)]
# unigram counts of the tokens file, which is the run's corpus
counts = dict(q("SELECT u.token_id, u.count FROM runs r JOIN unigram_counts u ON u.corpus_id = r.corpus_id WHERE r.id = 1"))
want = np.bincount(tok.ravel())
assert counts == {i: int(c) for i, c in enumerate(want) if c}, 'unigram counts'
assert q("SELECT r2.corpus_id = r1.corpus_id FROM runs r1, runs r2 WHERE r1.id = 1 AND r2.id = 2") == [(0,)], 'u2 file is another corpus'
# heads
rows = q("SELECT window, position, head, alpha, beta, mem_norm FROM head_steps WHERE run_id = 1 ORDER BY window, position, head")
assert len(rows) == al.size
assert np.array_equal(np.array([r[3] for r in rows], dtype='<f4'), al.ravel())
assert np.array_equal(np.array([r[4] for r in rows], dtype='<f4'), be.astype('<f4').ravel())
assert all(r[5] is None for r in rows)
assert q("SELECT count(*), count(beta) FROM head_steps WHERE run_id = 4") == [(al.size, 0)]
# the run and the model
run = q("SELECT kind, status, seq_len, n_windows, d_state, n_heads, state_dtype, windows_done, tokens_done, finished_at IS NOT NULL FROM runs WHERE id = 1")[0]
assert run == ('import', 'complete', T, N, d, 5, 'f32', N, N * T, 1), run
assert q("SELECT m.sha256 FROM runs r JOIN models m ON m.id = r.model_id WHERE r.id = 1") == [(sys.argv[1],)]
assert q("SELECT count(*) FROM windows WHERE run_id = 1") == [(N,)]
assert q("SELECT json_extract(settings, '$.states.dtype'), json_extract(settings, '$.beta.dtype') FROM runs WHERE id = 1") == [('<f4', '<f8')]
assert q("PRAGMA integrity_check") == [('ok',)]
print('python checks passed')
PY

# the same values through gpnscope sql and the store's own functions
out=$("$bin" sql a.db "SELECT count(*) FROM states WHERE run_id = 3 AND vec_length(vec_f32(vector, dtype)) = 24" --csv)
[[ "$out" == $'count(*)\n33' ]] || { echo "FAIL: vec_f32 on imported f16 states: $out"; exit 1; }
"$bin" import --help | grep -q -- "--tokens F.npy"
echo "import round trip: ok"
