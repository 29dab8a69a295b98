#!/usr/bin/env bash
# gpnscope convert: a pickle with the companion's structure (params + an
# opt_state of classes we do not have), written as numpy 1.x and as numpy 2.x
# would name things, round-trips exactly; a hostile pickle is refused and runs
# nothing. The PyTorch .pt fixtures convert to their .weights.safetensors bit
# for bit; the format is sniffed from the bytes; an existing output is
# replaced only with --force, the input never. Python (with numpy) only
# builds the test pickles and checks the outputs: convert itself runs none.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir convert
fx="$GPNSCOPE_FIXTURES/reference/gpnm1.weights.safetensors"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"

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
# protocols 0 and 1 spell the optimizer's objects with copyreg._reconstructor
for p in (0, 1):
    open(out + "/proto%d.pkl" % p, "wb").write(pickle.dumps(ckpt, protocol=p))
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

for v in np1 np2 flax proto0 proto1; do
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

# ---- PyTorch checkpoints: every tensor as in the reference safetensors ----
for n in tpp2 gdn2 rt2; do
  if "$GPNSCOPE_BIN" convert "$GPNSCOPE_FIXTURES/reference/$n.checkpoint.pt" "$dir/$n.safetensors" >"$dir/$n.out" 2>&1; then
    ok "convert $n.checkpoint.pt: $(cat "$dir/$n.out")"
  else
    bad "convert $n.checkpoint.pt: $(cat "$dir/$n.out")"; continue
  fi
  if "$py" - "$dir/$n.safetensors" "$GPNSCOPE_FIXTURES/reference/$n.weights.safetensors" "$n" <<'PY'
import json, struct, sys
def load(p):
    raw = open(p, "rb").read(); n = struct.unpack("<Q", raw[:8])[0]; h = json.loads(raw[8:8 + n])
    m = h.pop("__metadata__", {})
    return {k: (v["dtype"], v["shape"], raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]]) for k, v in h.items()}, m
a, meta = load(sys.argv[1]); b, _ = load(sys.argv[2])
assert set(a) == set(b), set(a) ^ set(b)
for k in a: assert a[k] == b[k], k
assert meta["format"] == "pytorch" and meta["source"] == sys.argv[3] + ".checkpoint.pt" and len(meta["source_sha256"]) == 64, meta
PY
  then ok "$n: every tensor equals the reference bit for bit, metadata format=pytorch"; else bad "$n: tensors differ"; fi
done
"$GPNSCOPE_BIN" convert "$GPNSCOPE_FIXTURES/reference/tpp2.checkpoint.pt" "$dir/tpp2_bf16.safetensors" --dtype bf16 >/dev/null 2>&1 &&
  "$py" -c "import json,struct,sys; r=open(sys.argv[1],'rb').read(); h=json.loads(r[8:8+struct.unpack('<Q',r[:8])[0]]); h.pop('__metadata__'); assert {v['dtype'] for v in h.values()}=={'BF16'}" "$dir/tpp2_bf16.safetensors" &&
  ok ".pt --dtype bf16" || bad ".pt --dtype bf16"

# ---- --meta: the config a state dict's shapes cannot tell ----
cfg='{"vocab_size": 89, "hidden_dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64}'
"$GPNSCOPE_BIN" convert "$GPNSCOPE_FIXTURES/reference/tpp2.checkpoint.pt" "$dir/tpp2_meta.safetensors" \
    --meta arch=transformer++ --meta "config=$cfg" --meta source=renamed >/dev/null 2>&1 &&
  "$py" -c "import json,struct,sys; r=open(sys.argv[1],'rb').read(); m=json.loads(r[8:8+struct.unpack('<Q',r[:8])[0]])['__metadata__']; assert m['arch']=='transformer++' and json.loads(m['config'])['n_heads']==2 and m['source']=='renamed' and m['format']=='pytorch', m" "$dir/tpp2_meta.safetensors" &&
  ok "--meta adds and overrides metadata" || bad "--meta"
if "$GPNSCOPE_BIN" convert "$GPNSCOPE_FIXTURES/reference/tpp2.checkpoint.pt" "$dir/tpp2_badmeta.safetensors" --meta novalue >"$dir/badmeta.out" 2>&1; then
  bad "--meta without = accepted"
else
  grep -q "KEY=VALUE" "$dir/badmeta.out" && [[ ! -e "$dir/tpp2_badmeta.safetensors" ]] && ok "--meta without = refused: $(cat "$dir/badmeta.out")" || bad "--meta without =: $(cat "$dir/badmeta.out")"
fi

# ---- the format comes from the bytes, not the name ----
cp "$GPNSCOPE_FIXTURES/reference/rt2.checkpoint.pt" "$dir/misnamed.pkl"
cp "$dir/np1.pkl" "$dir/misnamed.pt"
"$GPNSCOPE_BIN" convert "$dir/misnamed.pkl" "$dir/misnamed1.safetensors" 2>&1 | grep -q "pytorch" && ok "a zip named .pkl is read as PyTorch" || bad "zip named .pkl"
"$GPNSCOPE_BIN" convert "$dir/misnamed.pt" "$dir/misnamed2.safetensors" 2>&1 | grep -q "gpn_m" && ok "a pickle named .pt is read as a pickle" || bad "pickle named .pt"

# ---- hostile zips made by Python's zipfile ----
"$py" - "$dir" <<'PY'
import sys, zipfile
d = sys.argv[1]
with zipfile.ZipFile(d + "/traversal.pt", "w") as z:
    z.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
    z.writestr("../../etc/evil", b"x")
with zipfile.ZipFile(d + "/bomb.pt", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("archive/data.pkl", b"\x00" * (100 << 20))
PY
for v in traversal bomb; do
  if "$GPNSCOPE_BIN" convert "$dir/$v.pt" "$dir/$v.safetensors" >"$dir/$v.out" 2>&1; then bad "$v.pt accepted"
  else [[ $(wc -l <"$dir/$v.out") -eq 1 ]] && ok "$v.pt refused with one line: $(cat "$dir/$v.out")" || bad "$v.pt: $(cat "$dir/$v.out")"; fi
done
[[ $(stat -c %s "$dir/bomb.pt") -lt 1000000 ]] && ok "the bomb is small ($(stat -c %s "$dir/bomb.pt") bytes)" || bad "bomb size"

# ---- --force, and never over the input ----
sum_before=$(sha256sum "$dir/np1.safetensors" | cut -d' ' -f1)
if "$GPNSCOPE_BIN" convert "$dir/flax.pkl" "$dir/np1.safetensors" >"$dir/exists.out" 2>&1; then bad "an existing output was replaced without --force"
else grep -q -- "--force" "$dir/exists.out" && ok "an existing output is kept without --force: $(cat "$dir/exists.out")" || bad "exists: $(cat "$dir/exists.out")"; fi
[[ $(sha256sum "$dir/np1.safetensors" | cut -d' ' -f1) == "$sum_before" ]] && ok "the existing output is unchanged" || bad "existing output changed"
"$GPNSCOPE_BIN" convert "$GPNSCOPE_FIXTURES/reference/tpp2.checkpoint.pt" "$dir/np1.safetensors" --force >/dev/null 2>&1 &&
  "$py" -c "import json,struct,sys; r=open(sys.argv[1],'rb').read(); h=json.loads(r[8:8+struct.unpack('<Q',r[:8])[0]]); assert h['__metadata__']['format']=='pytorch'" "$dir/np1.safetensors" &&
  ok "--force replaces it" || bad "--force"
cp "$dir/np1.pkl" "$dir/self.pkl"; ln -sf "$dir/self.pkl" "$dir/self-link.safetensors"
in_sum=$(sha256sum "$dir/self.pkl" | cut -d' ' -f1)
for outp in "$dir/self.pkl" "$dir/self-link.safetensors" "$dir/../convert/self.pkl"; do
  if "$GPNSCOPE_BIN" convert "$dir/self.pkl" "$outp" --force >"$dir/self.out" 2>&1; then bad "output == input accepted ($outp)"
  else grep -q "the output is the input" "$dir/self.out" && ok "output == input refused, even with --force ($(basename "$outp"))" || bad "self: $(cat "$dir/self.out")"; fi
done
[[ $(sha256sum "$dir/self.pkl" | cut -d' ' -f1) == "$in_sum" ]] && ok "the input is unchanged" || bad "the input changed"
# a companion .pt with its model config (--config): the Transformer++ loads with the heads the config
# gives; without the config its heads are unknown and it is refused in one line naming --config
fx="$GPNSCOPE_FIXTURES/reference"
"$py" -c "import json,struct,sys; r=open(sys.argv[1],'rb').read(); h=json.loads(r[8:8+struct.unpack('<Q',r[:8])[0]]); open(sys.argv[2],'w').write(h['__metadata__']['config'])" \
  "$fx/tpp2.weights.safetensors" "$dir/tpp2.config.json"
"$GPNSCOPE_BIN" convert "$fx/tpp2.checkpoint.pt" "$dir/tpp2-config.safetensors" --config "$dir/tpp2.config.json" >/dev/null &&
  [[ "$("$GPNSCOPE_BIN" info "$dir/tpp2-config.safetensors")" == *"heads=2"* ]] && ok "--config: the converted Transformer++ knows its heads" || bad "--config"
# its tensors are the fixture's bit for bit (checked above for every .pt), so with the same config
# it is the same model: the engine's parity with the companion (test_family_tpp) holds for it
"$GPNSCOPE_BIN" convert "$fx/tpp2.checkpoint.pt" "$dir/tpp2-noconfig.safetensors" >/dev/null
set +e; "$GPNSCOPE_BIN" info "$dir/tpp2-noconfig.safetensors" >/dev/null 2>"$dir/nocfg.err"; rc=$?; set -e
[[ $rc -ne 0 && $(wc -l <"$dir/nocfg.err") -eq 1 ]] && grep -q -- "--config" "$dir/nocfg.err" &&
  ok "without --config its heads are unknown: $(cat "$dir/nocfg.err")" || bad "no config: exit $rc $(cat "$dir/nocfg.err")"
ls "$dir" | grep -q "convert-" && bad "temporary files left: $(ls "$dir" | grep convert-)" || ok "no temporary files left behind"
finish
