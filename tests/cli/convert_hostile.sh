#!/usr/bin/env bash
# Hostile checkpoints and configs, round three (issue 35, items 2, 4, 8, 10,
# 13): a .pt of deflated storages that inflate to 64 MiB each under tensors
# of one element is refused before anything is inflated (and in little
# memory); a safetensors header of 400000 names is read in linear time; a
# --config with text after the object, a NUL in a key or 1e999 is refused
# naming it; sizes beyond int (1e300, 2^63, 1e20, 2^31) in a model config
# and token ids beyond int32 in prompt pairs are refused by name before any
# cast; layer_norm_eps 1e300 is refused; a NaN tensor needs
# --allow-nonfinite; a tensor named __metadata__, a __metadata__ that is not
# text, and the legacy torch.save format are refused saying what they are.
# Python (standard library) only writes the inputs.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python zlib
scratch_dir convert_hostile
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
fx="$GPNSCOPE_FIXTURES/reference"

# A torch.save archive without torch: _rebuild_tensor_v2 over persistent storages.
cat >"$dir/fake_torch.py" <<'PY'
import collections, io, pickle, struct, sys, types, zipfile
torch = types.ModuleType("torch"); sys.modules["torch"] = torch
ut = types.ModuleType("torch._utils"); sys.modules["torch._utils"] = ut
class FloatStorage: pass
FloatStorage.__module__ = "torch"; torch.FloatStorage = FloatStorage
def _rebuild_tensor_v2(*a): pass
_rebuild_tensor_v2.__module__ = "torch._utils"; ut._rebuild_tensor_v2 = _rebuild_tensor_v2
class Storage:
    def __init__(self, key, numel): self.key, self.numel = key, numel
class Tensor:
    def __init__(self, s, size): self.s, self.size = s, size
    def __reduce__(self):
        return (_rebuild_tensor_v2, (self.s, 0, (self.size,), (1,), False, collections.OrderedDict()))
class Pickler(pickle.Pickler):
    def persistent_id(self, o):
        return ("storage", FloatStorage, o.key, "cpu", o.numel) if isinstance(o, Storage) else None
def write(path, tensors, compress=None):
    """tensors: {name: (storage bytes, elements the tensor takes)}"""
    with zipfile.ZipFile(path, "w") as z:
        sd = {}
        for i, (name, (data, size)) in enumerate(tensors.items()):
            sd[name] = Tensor(Storage(str(i), len(data) // 4), size)
            info = zipfile.ZipInfo("a/data/%d" % i)
            z.writestr(info, data, compress_type=compress or zipfile.ZIP_STORED, compresslevel=1 if compress else None)
        b = io.BytesIO(); Pickler(b, protocol=2).dump(sd)
        z.writestr("a/data.pkl", b.getvalue())
PY

# ---- item 2: deflate amplification, refused from the zip directory ----
"$py" - "$dir" <<'PY'
import sys, zipfile
sys.path.insert(0, sys.argv[1]); import fake_torch
blob = bytes(64 << 20)
fake_torch.write(sys.argv[1] + "/amplify.pt", {"t%d" % i: (blob, 1) for i in range(8)}, zipfile.ZIP_DEFLATED)
PY
"$py" - "$bin" "$dir" <<'PY' >"$dir/amplify.txt" 2>&1 && ok "amplification: $(cat "$dir/amplify.txt")" || bad "amplification: $(cat "$dir/amplify.txt")"
import resource, subprocess, sys
bin, d = sys.argv[1], sys.argv[2]
r = subprocess.run([bin, "convert", d + "/amplify.pt", d + "/amplify.safetensors"], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # MB (Linux: KB)
err = r.stderr.strip()
assert r.returncode == 1 and "\n" not in err and "zip bomb" in err, (r.returncode, err)
assert peak < 300, "peak RSS %.0f MB" % peak
print("%s; peak RSS %.0f MB (archive of %d bytes, 512 MiB inflated)" % (err, peak, __import__("os").path.getsize(d + "/amplify.pt")))
PY
[[ ! -e "$dir/amplify.safetensors" ]] && ok "no output for the amplification archive" || bad "amplification output written"

# a deflated archive whose storages the tensors use whole still converts
"$py" - "$dir" <<'PY'
import struct, sys, zipfile
sys.path.insert(0, sys.argv[1]); import fake_torch
fake_torch.write(sys.argv[1] + "/deflated.pt", {"w": (struct.pack("<4f", 1, 2, 3, 4), 4)}, zipfile.ZIP_DEFLATED)
PY
"$bin" convert "$dir/deflated.pt" "$dir/deflated.safetensors" >"$dir/deflated.out" 2>&1 &&
  ok "a deflated archive of used storages converts: $(cat "$dir/deflated.out")" || bad "deflated: $(cat "$dir/deflated.out")"

# ---- item 8: 400000 names in a safetensors header ----
"$py" - "$dir/names.safetensors" <<'PY'
import struct, sys
n = 400000
h = ("{" + ",".join('"t%d":{"dtype":"F32","shape":[1],"data_offsets":[%d,%d]}' % (i, 4 * i, 4 * i + 4) for i in range(n)) + "}").encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + bytes(4 * n))
PY
# (timeout: a hang guard; before the hash table this took over 150 s)
set +e; timeout 120 "$bin" info "$dir/names.safetensors" >/dev/null 2>"$dir/names.err"; rc=$?; set -e
[[ $rc -eq 1 && $(wc -l <"$dir/names.err") -eq 1 ]] && grep -q "no architecture" "$dir/names.err" &&
  ok "400000 names: info answers in one line (no architecture)" || bad "400000 names: exit $rc $(head -c 300 "$dir/names.err")"

# ---- item 4: --config strictness ----
config_refused() { # JSON NEEDLE
  printf '%s' "$1" >"$dir/c.json"; rm -f "$dir/c.safetensors"
  set +e; "$bin" convert "$fx/tpp2.checkpoint.pt" "$dir/c.safetensors" --config "$dir/c.json" >/dev/null 2>"$dir/c.err"; rc=$?; set -e
  [[ $rc -eq 2 && $(wc -l <"$dir/c.err") -eq 1 ]] && grep -qF -- "$2" "$dir/c.err" && [[ ! -e "$dir/c.safetensors" ]] &&
    ok "--config '$1': $(cat "$dir/c.err")" || bad "--config '$1': exit $rc $(cat "$dir/c.err")"
}
config_refused '{"n_heads": 2} trailing' "text after the JSON value, at byte 15"
config_refused '{"n_heads\u0000x": 2}' 'the key "n_heads\u0000x" holds a NUL'
config_refused '{"n_heads": 1e999}' '"n_heads" is a number too large for a double'

# ---- item 10: sizes beyond int, layer_norm_eps beyond float, token ids beyond int32 ----
for v in 1e300 9223372036854775808 1e20 2147483648; do
  printf '{"vocab_size": 89, "hidden_dim": 32, "n_layers": 2, "n_heads": %s, "ffn_dim": 64}' "$v" >"$dir/h.json"
  rm -f "$dir/h.safetensors"
  "$bin" convert "$fx/tpp2.checkpoint.pt" "$dir/h.safetensors" --config "$dir/h.json" >/dev/null
  set +e; "$bin" info "$dir/h.safetensors" >/dev/null 2>"$dir/h.err"; rc=$?; set -e
  [[ $rc -eq 1 && $(wc -l <"$dir/h.err") -eq 1 ]] && grep -q '"n_heads" = .* is not an integer from 0 to 2147483647' "$dir/h.err" &&
    ok "n_heads $v: $(cat "$dir/h.err")" || bad "n_heads $v: exit $rc $(cat "$dir/h.err")"
done
"$py" - "$fx/rt2.weights.safetensors" "$dir/eps.safetensors" <<'PY'
import json, struct, sys
raw = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", raw[:8])[0]; h = json.loads(raw[8:8 + n])
cfg = json.loads(h["__metadata__"]["config"]); cfg["layer_norm_eps"] = 1e300
h["__metadata__"]["config"] = json.dumps(cfg)
hb = json.dumps(h).encode(); hb += b" " * (-len(hb) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(hb)) + hb + raw[8 + n:])
PY
set +e; "$bin" info "$dir/eps.safetensors" >/dev/null 2>"$dir/eps.err"; rc=$?; set -e
[[ $rc -eq 1 && $(wc -l <"$dir/eps.err") -eq 1 ]] && grep -q '"layer_norm_eps" = 1e+300 is out of range' "$dir/eps.err" &&
  ok "layer_norm_eps 1e300: $(cat "$dir/eps.err")" || bad "layer_norm_eps 1e300: exit $rc $(cat "$dir/eps.err")"
for ids in '[5, 2147483648, 7]' '[5, 1e300, 7]'; do
  printf '{"clean": %s, "corrupted": [5, 8, 7], "answer": 9, "foil": 10}\n' "$ids" >"$dir/pairs.jsonl"
  set +e; "$bin" patch "$fx/gpnm1.weights.safetensors" "$dir/pairs.jsonl" >/dev/null 2>"$dir/pairs.err"; rc=$?; set -e
  [[ $rc -eq 1 && $(wc -l <"$dir/pairs.err") -eq 1 ]] && grep -q 'a token id: "clean"\[1\] = .* is not an integer from 0 to 2147483647' "$dir/pairs.err" &&
    ok "token id $ids: $(cat "$dir/pairs.err")" || bad "token id $ids: exit $rc $(cat "$dir/pairs.err")"
done
printf '{"clean": [5, 6, 7], "corrupted": [5, 8, 7], "answer": 9, "foil": 10} {}\n' >"$dir/pairs.jsonl"
set +e; "$bin" patch "$fx/gpnm1.weights.safetensors" "$dir/pairs.jsonl" >/dev/null 2>"$dir/pairs.err"; rc=$?; set -e
[[ $rc -eq 1 ]] && grep -q "pairs.jsonl:1: text after the JSON value" "$dir/pairs.err" &&
  ok "a pair line with text after its object: $(cat "$dir/pairs.err")" || bad "pair trailing text: exit $rc $(cat "$dir/pairs.err")"

# ---- item 13: NaN tensors, a tensor named __metadata__, __metadata__ not text, the legacy format ----
"$py" - "$dir" <<'PY'
import pickle, struct, sys
sys.path.insert(0, sys.argv[1]); import fake_torch
d = sys.argv[1]
nan = struct.pack("<3f", *[float("nan")] * 3)
fake_torch.write(d + "/nan.pt", {"ok": (struct.pack("<2f", 1, 2), 2), "diverged": (nan, 3)})
fake_torch.write(d + "/reserved.pt", {"__metadata__": (struct.pack("<f", 1), 1)})
# torch.save(..., _use_new_zipfile_serialization=False): the magic number, the protocol, sys_info, the object, the keys
with open(d + "/legacy.pt", "wb") as f:
    for obj in (0x1950a86a20f9469cfc6c, 1001, {"protocol_version": 1001}, {"w": None}, []):
        pickle.dump(obj, f, protocol=2)
h = b'{"__metadata__": {"config": {"n_heads": 2}}, "w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}'
open(d + "/meta_obj.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + bytes(4))
PY
refused() { # WHAT NEEDLE CMD...
  local what="$1" needle="$2"; shift 2
  set +e; "$@" >/dev/null 2>"$dir/r.err"; local rc=$?; set -e
  [[ $rc -ne 0 && $(wc -l <"$dir/r.err") -eq 1 ]] && grep -qF -- "$needle" "$dir/r.err" &&
    ok "$what: $(cat "$dir/r.err")" || bad "$what: exit $rc $(cat "$dir/r.err")"
}
refused "a NaN tensor" "tensor 'diverged' holds 3 of 3 values that are NaN or infinite" "$bin" convert "$dir/nan.pt" "$dir/nan.safetensors"
[[ ! -e "$dir/nan.safetensors" ]] && ok "no output for the NaN tensor" || bad "NaN output written"
"$bin" convert "$dir/nan.pt" "$dir/nan.safetensors" --allow-nonfinite >/dev/null 2>&1 && ok "--allow-nonfinite converts it" || bad "--allow-nonfinite"
"$bin" convert --help | grep -q -- "--allow-nonfinite" && ok "--help names --allow-nonfinite" || bad "--help"
refused "a tensor named __metadata__" "a tensor is named '__metadata__'" "$bin" convert "$dir/reserved.pt" "$dir/reserved.safetensors"
refused "the legacy torch.save format" "a PyTorch checkpoint in the legacy format" "$bin" convert "$dir/legacy.pt" "$dir/legacy.safetensors"
refused "__metadata__ of objects" "safetensors metadata holds text values only" "$bin" info "$dir/meta_obj.safetensors"
finish
