#!/usr/bin/env bash
# gpnscope import refuses hostile or mismatched .npy files with one line on
# stderr (exit 1), before touching the store: no run is added.
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir cli_import_hostile; cd "$dir"
fail=0
bad() { echo "FAIL: $1"; fail=$((fail+1)); }

"$py" - <<'PY'
import numpy as np
s = np.ones((2, 4, 8), dtype='<f4')
np.save('good.npy', s)
np.save('tokens.npy', np.zeros((2, 4), dtype='<i4'))
raw = open('good.npy', 'rb').read()
open('truncated.npy', 'wb').write(raw[:-5])
open('trailing.npy', 'wb').write(raw + b'\0' * 4)
open('header_cut.npy', 'wb').write(raw[:30])
open('not_npy.npy', 'wb').write(b'PK\x03\x04' + raw[4:])
np.save('fortran.npy', np.asfortranarray(s))
np.save('complex.npy', s.astype(np.complex64))
np.save('strings.npy', np.array([['a', 'b']]))
np.save('big_endian.npy', s.astype('>f4'))
np.save('int_states.npy', s.astype('<i4'))
np.save('rank2.npy', s[0])
np.save('float_tokens.npy', np.zeros((2, 4), dtype='<f4'))
np.save('tokens_wrong_T.npy', np.zeros((2, 5), dtype='<i4'))
np.save('tokens_3d.npy', np.zeros((2, 4, 1), dtype='<i4'))
np.save('neg_tokens.npy', -np.ones((2, 4), dtype='<i4'))
np.save('alpha_wrong_N.npy', np.ones((3, 4, 2), dtype='<f4'))
np.save('alpha.npy', np.ones((2, 4, 2), dtype='<f4'))
np.save('beta_wrong_H.npy', np.ones((2, 4, 3), dtype='<f4'))
np.save('empty.npy', np.ones((0, 4, 8), dtype='<f4'))
np.save('object.npy', np.array([1, 'x'], dtype=object), allow_pickle=True)
# shape says more than the data: header edited in place (same length)
open('shape_lies.npy', 'wb').write(raw.replace(b'(2, 4, 8)', b'(2, 4, 9)'))
PY

# a store with one good run, to check nothing is added by the refusals
"$bin" import --db s.db --states good.npy --tokens tokens.npy > /dev/null || bad "the good import failed"
before=$(sha256sum s.db | cut -d' ' -f1)

# expect_refusal WHAT PATTERN ARGS...: exit 1, one line on stderr matching PATTERN
expect_refusal() {
    local what="$1" pattern="$2"; shift 2
    "$bin" import --db s.db "$@" > out.txt 2> err.txt
    local rc=$?
    local lines; lines=$(wc -l < err.txt)
    if [[ $rc -ne 1 ]]; then bad "$what: exit $rc, want 1 ($(cat err.txt))"
    elif [[ $lines -ne 1 ]]; then bad "$what: $lines lines on stderr: $(cat err.txt)"
    elif ! grep -q "^gpnscope import: .*$pattern" err.txt; then bad "$what: '$(cat err.txt)' does not match '$pattern'"
    elif [[ -s out.txt ]]; then bad "$what: printed to stdout"
    else echo "ok: $what: $(cat err.txt)"; fi
}

expect_refusal "truncated" "truncated: the file has 251 bytes of data, but shape (2, 4, 8) of <f4 needs 256" --states truncated.npy
expect_refusal "trailing bytes" "size mismatch" --states trailing.npy
expect_refusal "header cut" "truncated .npy header" --states header_cut.npy
expect_refusal "not npy" "not a .npy file" --states not_npy.npy
expect_refusal "fortran order" "Fortran order" --states fortran.npy
expect_refusal "complex" "unsupported dtype '<c8'" --states complex.npy
expect_refusal "strings" "unsupported dtype '<U1'" --states strings.npy
expect_refusal "object" "unsupported dtype '|O'" --states object.npy
expect_refusal "big-endian" "big-endian dtype '>f4'" --states big_endian.npy
expect_refusal "integer states" "states must be floats, got dtype <i4" --states int_states.npy
expect_refusal "rank 2 states" "states must be an array of 3 dimensions (N, T, d), got shape (4, 8)" --states rank2.npy
expect_refusal "empty states" "shape (0, 4, 8): every dimension must be between 1" --states empty.npy
expect_refusal "shape lies" "truncated" --states shape_lies.npy
expect_refusal "float tokens" "token ids must be integers, got dtype <f4" --states good.npy --tokens float_tokens.npy
expect_refusal "tokens of another T" "shape (2, 5) does not match the states' N=2 windows of T=4 positions" --states good.npy --tokens tokens_wrong_T.npy
expect_refusal "3-d tokens" "tokens must be an array of 2 dimensions" --states good.npy --tokens tokens_3d.npy
expect_refusal "alpha of another N" "alpha_wrong_N.npy: shape (3, 4, 2) does not match" --states good.npy --alpha alpha_wrong_N.npy
expect_refusal "beta with other heads" "has H=3 heads but alpha has 2" --states good.npy --alpha alpha.npy --beta beta_wrong_H.npy
expect_refusal "missing file" "missing.npy" --states missing.npy
expect_refusal "missing model" "nomodel.bin" --states good.npy --model nomodel.bin
"$bin" import --db notastore.txt --states good.npy >/dev/null 2>&1; echo "text" > notastore.txt
expect_refusal "db not a store" "not a gpnscope store" --states good.npy --db notastore.txt
# negative ids are found while writing: the run is marked failed, the file stays consistent
"$bin" import --db neg.db --states good.npy --tokens neg_tokens.npy > /dev/null 2> err.txt
[[ $? -eq 1 ]] && grep -q "token id -1 at window 0 position 0 is not a valid id" err.txt || bad "negative token ids: $(cat err.txt)"
st=$("$bin" sql neg.db "SELECT status FROM runs" --csv | tail -1)
[[ "$st" == failed ]] || bad "a failed import is marked failed (got $st)"
ic=$("$bin" sql neg.db "PRAGMA integrity_check" --csv | tail -1)
[[ "$ic" == ok ]] || bad "integrity after a failed import: $ic"

# usage errors: exit 2
"$bin" import --db s.db > /dev/null 2>&1; [[ $? -eq 2 ]] || bad "missing --states is a usage error"
"$bin" import --db s.db --states good.npy --kind middle > /dev/null 2>&1; [[ $? -eq 2 ]] || bad "bad --kind is a usage error"
"$bin" import --db s.db --states good.npy --dtype f64 > /dev/null 2>&1; [[ $? -eq 2 ]] || bad "bad --dtype is a usage error"

after=$(sha256sum s.db | cut -d' ' -f1)
[[ "$before" == "$after" ]] || bad "refusals changed the store"
runs=$("$bin" sql s.db "SELECT count(*) FROM runs" --csv | tail -1)
[[ "$runs" == 1 ]] || bad "refusals added runs ($runs)"
[[ $fail -eq 0 ]] && echo "all refusals clean" || exit 1
