#!/usr/bin/env bash
# The default direction's batches by document (docs/analyses.md, section 2;
# issue 39.2) on a planted store: 48 windows of 16 states cut from 17
# documents of 2, 3 x 15 and 1 windows (a <s> at each document's first
# token), every state of document i being mu + o_i with mu = 2 e0 and
# o_i = 2 e_{1+i} (and +-0.1 e19 alternating inside each window, which adds
# nothing to a window's sum). The cosine between means of batches of different
# documents then has a closed form, which the batches by document (document i
# in batch i mod 8) read and the consecutive batches, which cut documents in
# two so that neighbours share one, do not; analyze --json, the findings and
# compare say which grouping decides. A store with 4 documents says in one
# line that the grouping is not possible, and the consecutive batches decide.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir batch_documents
cd "$dir"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"

"$py" - <<'PY'
import numpy as np
W, T, d = 48, 16, 20
lens = [2] + [3] * 15 + [1]
doc = np.repeat(np.arange(len(lens)), lens)
x = np.zeros((W, T, d), '<f4'); x[:, :, 0] = 2
x[np.arange(W), :, 1 + doc] = 2
x[:, :, 19] = np.where(np.arange(T) % 2, 0.1, -0.1)  # within-window content (compare's horizon needs it); sums to 0
tok = np.full((W, T), 5, '<i4')
starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
tok[starts, 0] = 1                      # <s>: a document starts here
np.save('states.npy', x); np.save('tokens.npy', tok)
few = np.full((W, T), 5, '<i4'); few[::12, 0] = 1   # 4 documents
np.save('few.npy', few)
PY
# the import has no vocabulary: give its run one that names <s> and </s>, as a recording's tokenizer does
vocab() {
  "$py" - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("insert into tokenizers (id, path, sha256, kind, vocab_size) values (7, 'plant', ?, 'plant', 6)", ("7" * 64,))
c.executemany("insert into vocabulary (tokenizer_id, token_id, piece) values (7, ?, ?)",
              [(0, "<unk>"), (1, "<s>"), (2, "</s>"), (3, "a"), (4, "b"), (5, "c")])
c.execute("update runs set tokenizer_id = 7")
c.commit()
PY
}
"$bin" import --db docs.db --states states.npy --tokens tokens.npy >/dev/null && vocab docs.db
"$bin" import --db few.db --states states.npy --tokens few.npy >/dev/null && vocab few.db

"$bin" analyze docs.db --only geometry,default --json >docs.json 2>err || bad "analyze: $(cat err)"
r="$("$py" - <<'PY'
import json, numpy as np
j = json.load(open('docs.json'))["default_direction"]
f = json.load(open('docs.json'))["findings"]["default_direction"]
lens = [2] + [3] * 15 + [1]
x = np.load('states.npy').astype(float)
wsum = x.sum(axis=1)
def mean_pair_cos(groups):
    B = np.array([wsum[g].sum(axis=0) for g in groups])
    B /= np.linalg.norm(B, axis=1, keepdims=True)
    C = B @ B.T
    return C[np.triu_indices(8, 1)].mean()
# the closed form: batch b holds documents b, b + 8, ...; its mean is mu + sum_i (n_i / N_b) o_i
N = np.zeros(8); q = np.zeros(8)
for i, n in enumerate(lens): N[i % 8] += n
for i, n in enumerate(lens): q[i % 8] += 4 * (n / N[i % 8]) ** 2
truth = np.mean([4 / np.sqrt((4 + q[a]) * (4 + q[b])) for a in range(8) for b in range(a + 1, 8)])
consecutive = mean_pair_cos([np.arange(48)[np.arange(48) * 8 // 48 == b] for b in range(8)])
assert j["batch_grouping"] == "documents" and j["documents"] == 17, j
assert abs(j["batch_cos_doc_mean"] - truth) < 1e-9, (j["batch_cos_doc_mean"], truth)
assert abs(j["batch_cos_mean"] - consecutive) < 1e-9 and abs(consecutive - truth) > 0.02, (j["batch_cos_mean"], consecutive)
assert j["batch_cos_doc_lo"] < j["batch_cos_doc_hi"], j
assert "8-batch cosine over documents" in f["brief"] and "they decide" in f["text"], f
print("by document %.6f (closed form %.6f) [%.4f, %.4f], consecutive windows %.6f; %s" % (
    j["batch_cos_doc_mean"], truth, j["batch_cos_doc_lo"], j["batch_cos_doc_hi"], j["batch_cos_mean"], f["brief"]))
PY
)" && ok "17 documents: $r" || bad "batches by document: $r"

"$bin" compare docs.db --json --quiet >cmp.json 2>err || bad "compare: $(cat err)"
r="$("$py" - <<'PY'
import json
d = json.load(open('cmp.json'))["rows"][0]["default_direction"]
a = json.load(open('docs.json'))["default_direction"]
assert d["batch_grouping"] == "documents" and d["batch_cos"] == d["batch_cos_documents"], d
assert abs(d["batch_cos_documents"]["value"] - a["batch_cos_doc_mean"]) < 1e-12, d
assert abs(d["batch_cos_consecutive"]["value"] - a["batch_cos_mean"]) < 1e-12, d
assert "8-batch cosine over documents" in d["reason"], d
print(d["batch_grouping_note"])
PY
)" && ok "compare's row: the documents decide, the consecutive reading beside them: $r" || bad "compare's row: $r"

"$bin" analyze few.db --only geometry,default >few.txt 2>err || bad "analyze few: $(cat err)"
line='batches by document: not possible: 4 documents in 48 windows (16 needed, 2 a batch): the consecutive windows decide'
n="$(grep -c -F "$line" few.txt || true)"
[[ "$n" -ge 1 ]] && ! grep -q "over documents" few.txt && ok "4 documents: said in one line: $line" \
  || bad "4 documents: $(grep -n 'by document' few.txt)"
finish
