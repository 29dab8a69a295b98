"""What the CLI tests' Python snippets share (not a test itself;
tests/cli/lib/prelude.sh puts this folder on PYTHONPATH): reading a
.safetensors file, and writing token ids as the corpus shards that record
and eval read (data_0000.bin of uint32 ids, data_0000.index.json with the
document lengths, meta.json). Standard library only, but for the numpy
arrays that read_safetensors returns."""
import json
import struct


def write_shards(out, ids, vocab, docs=None, tokenizer="fixture", indent=None):
    """The shards of ids (a list or array of token ids) in folder out: one
    document, or documents of the lengths in docs."""
    ids = [int(i) for i in ids]
    docs = docs if docs is not None else [len(ids)]
    with open(out + "/data_0000.bin", "wb") as f:
        f.write(struct.pack("<%dI" % len(ids), *ids))
    with open(out + "/data_0000.index.json", "w") as f:
        json.dump(docs, f)
    meta = {"tokenizer": tokenizer, "vocab_size": vocab, "total_tokens": len(ids), "total_docs": len(docs),
            "num_shards": 1}
    with open(out + "/meta.json", "w") as f:
        json.dump(meta, f, indent=indent)


def read_safetensors(path):
    """(header, get): the file's header (with its __metadata__) and
    get(name, dtype="<f4"), the tensor as a numpy array of its shape."""
    import numpy as np
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    hdr = json.loads(raw[8:8 + n])

    def get(name, dtype="<f4"):
        b, e = hdr[name]["data_offsets"]
        return np.frombuffer(raw[8 + n + b:8 + n + e], dtype=dtype).reshape(hdr[name]["shape"])
    return hdr, get


def with_metadata(src, dst, hdr):
    """dst: src's tensors under the header hdr (read_safetensors' header with
    its __metadata__ changed), padded to 8 bytes as the format asks."""
    raw = open(src, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    h = json.dumps(hdr).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    open(dst, "wb").write(struct.pack("<Q", len(h)) + h + raw[8 + n:])


def documented_sites(doc_path, info_path, arch, n_layers, n_heads, d_state):
    """`gpnscope info MODEL --json` (in info_path) of the family `arch` with
    these sizes, every site of it in docs/hooks.md (doc_path); prints each
    site and its width, one a line. Returns the info and {site: width}."""
    o = json.load(open(info_path))
    doc = open(doc_path).read()
    assert o["arch"] == arch and o["n_layers"] == n_layers and o["n_heads"] == n_heads and o["d_state"] == d_state, o
    for s in o["sites"]:
        assert "| `%s` |" % s["name"] in doc, "docs/hooks.md lacks " + s["name"]
        print(s["name"], s["width"])
    return o, {s["name"]: s["width"] for s in o["sites"]}
