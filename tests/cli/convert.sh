#!/usr/bin/env bash
# gpnscope convert: a pickle with the companion's structure (params + an
# opt_state of classes we do not have), written as numpy 1.x and as numpy 2.x
# would name things, round-trips exactly; a hostile pickle is refused and runs
# nothing.
set -euo pipefail
py="${GPNSCOPE_PYTHON:-/usr/bin/python3}"
"$py" -c "import numpy" 2>/dev/null || { echo "SKIPPED: $py has no numpy"; exit 77; }
dir="$GPNSCOPE_BUILD/test-scratch/convert"; rm -rf "$dir"; mkdir -p "$dir"
fx="$GPNSCOPE_FIXTURES/reference/gpnm1.weights.safetensors"
fail=0; pass=0
ok() { echo "ok: $1"; pass=$((pass+1)); }
bad() { echo "FAIL: $1"; fail=$((fail+1)); }

"$py" - "$fx" "$dir" <<'PY'
import json, pickle, struct, sys, types
import numpy as np
fx, out = sys.argv[1], sys.argv[2]
raw = open(fx, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
hdr = json.loads(raw[8:8 + n])
params = {}
for k, v in hdr.items():
    if k == "__metadata__": continue
    b, e = v["data_offsets"]
    params[k] = np.frombuffer(raw[8 + n + b:8 + n + e], dtype="<f4").reshape(v["shape"]).copy()
# optimizer state made of classes the converter does not have
mod = types.ModuleType("optax._src.transform"); sys.modules["optax"] = types.ModuleType("optax")
sys.modules["optax._src"] = types.ModuleType("optax._src"); sys.modules["optax._src.transform"] = mod
class ScaleByAdamState:
    def __init__(self, count, mu, nu): self.count, self.mu, self.nu = count, mu, nu
ScaleByAdamState.__module__ = "optax._src.transform"; mod.ScaleByAdamState = ScaleByAdamState
opt = (ScaleByAdamState(np.int32(7), {k: np.zeros_like(v) for k, v in params.items()},
                        {k: np.ones_like(v) for k, v in params.items()}),)
ckpt = {"step": 7, "data_position": 1234, "params": params, "opt_state": opt}
data = pickle.dumps(ckpt, protocol=2)
open(out + "/np1.pkl", "wb").write(data)
# numpy >= 2 writes numpy._core.multiarray; protocol 2 names globals as text lines
open(out + "/np2.pkl", "wb").write(data.replace(b"numpy.core.multiarray\n", b"numpy._core.multiarray\n"))
assert b"numpy._core" in open(out + "/np2.pkl", "rb").read()
# flax layout: {"params": {"params": {...}}}
open(out + "/flax.pkl", "wb").write(pickle.dumps({"step": 1, "params": {"params": params}, "opt_state": None}, protocol=4))
np.savez(out + "/ref.npz", **params)
class Evil:
    def __reduce__(self):
        import os
        return (os.system, ("touch " + out + "/PWNED",))
open(out + "/evil.pkl", "wb").write(pickle.dumps({"params": params, "x": Evil()}, protocol=2))
class EvalEvil:
    def __reduce__(self):
        return (eval, ("open('" + out + "/PWNED2','w')",))
open(out + "/evil_eval.pkl", "wb").write(pickle.dumps(EvalEvil(), protocol=4))
PY

for v in np1 np2 flax; do
  if "$GPNSCOPE_BIN" convert "$dir/$v.pkl" "$dir/$v.safetensors" >"$dir/$v.out" 2>&1; then
    ok "convert $v"
  else
    bad "convert $v: $(cat "$dir/$v.out")"; continue
  fi
  if "$py" - "$dir/$v.safetensors" "$dir/ref.npz" <<'PY'
import json, struct, sys
import numpy as np
raw = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", raw[:8])[0]
hdr = json.loads(raw[8:8 + n]); ref = np.load(sys.argv[2])
meta = hdr.pop("__metadata__")
assert meta["arch"] == "gpn_m" and meta["d_state"] == "40" and meta["n_heads"] == "3", meta
assert set(hdr) == set(ref.files), set(hdr) ^ set(ref.files)
for k, v in hdr.items():
    b, e = v["data_offsets"]
    a = np.frombuffer(raw[8 + n + b:8 + n + e], dtype="<f4").reshape(v["shape"])
    assert np.array_equal(a, ref[k]), k
PY
  then ok "$v tensors equal the source arrays bit for bit"; else bad "$v tensors differ"; fi
done
"$GPNSCOPE_BIN" info "$dir/np1.safetensors" | grep -q "gpn_m" && ok "info reads the converted model" || bad "info"
"$GPNSCOPE_BIN" convert "$dir/np1.pkl" "$dir/np1_bf16.safetensors" --dtype bf16 >/dev/null 2>&1 \
  && "$GPNSCOPE_BIN" info "$dir/np1_bf16.safetensors" | grep -q "stored as BF16" && ok "bf16 output" || bad "bf16 output"

for v in evil evil_eval; do
  if "$GPNSCOPE_BIN" convert "$dir/$v.pkl" "$dir/$v.safetensors" >"$dir/$v.out" 2>&1; then
    bad "$v accepted"
  else
    msg=$(cat "$dir/$v.out")
    [[ $(wc -l <"$dir/$v.out") -eq 1 ]] && ok "$v refused with one line: $msg" || bad "$v: message not one line: $msg"
    echo "$msg" | grep -qE "system|eval" && ok "$v message names the culprit" || bad "$v message: $msg"
  fi
done
[[ ! -e "$dir/PWNED" && ! -e "$dir/PWNED2" ]] && ok "nothing was executed" || bad "hostile pickle code ran"
[[ ! -e "$dir/evil.safetensors" ]] && ok "no output for a refused pickle" || bad "output written for a refused pickle"
printf 'garbage' >"$dir/junk.pkl"
"$GPNSCOPE_BIN" convert "$dir/junk.pkl" "$dir/junk.safetensors" 2>"$dir/junk.out" && bad "junk accepted" || ok "junk refused: $(cat "$dir/junk.out")"
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
