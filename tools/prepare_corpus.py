#!/usr/bin/env python3
"""Build the shipped model's English corpus from Debian packages.

No third-party text is committed: this script reads what the Debian packages
`python3.11-doc` (the Python documentation's reStructuredText sources) and
`fortunes` (quotations and short prose) install, and writes JSONL documents
split deterministically into a training part and a held-out part that training
never sees (a document is held out when the SHA-256 of its name ends in a byte
below 26, about 10%).

usage: prepare_corpus.py OUT_DIR      (writes OUT_DIR/train.jsonl, OUT_DIR/heldout.jsonl,
                                       OUT_DIR/manifest.json)
"""
import glob
import hashlib
import json
import os
import sys

PY_DOCS = "/usr/share/doc/python3.11/html/_sources"
FORTUNES = "/usr/share/games/fortunes"
FORTUNES_PER_DOC = 25


def python_docs():
    for path in sorted(glob.glob(os.path.join(PY_DOCS, "**", "*.txt"), recursive=True)):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read().strip()
        if len(text) > 200:
            yield "python-doc:" + os.path.relpath(path, PY_DOCS), text


def fortunes():
    for path in sorted(glob.glob(os.path.join(FORTUNES, "*"))):
        name = os.path.basename(path)
        if "." in name or os.path.isdir(path) or name in ("art", "ascii-art"):
            continue  # .dat indexes, .u8 duplicates; ASCII art is not prose
        with open(path, encoding="utf-8", errors="replace") as f:
            items = [x.strip() for x in f.read().split("\n%\n") if x.strip()]
        for i in range(0, len(items), FORTUNES_PER_DOC):
            yield "fortunes:%s:%d" % (name, i // FORTUNES_PER_DOC), "\n\n".join(items[i:i + FORTUNES_PER_DOC])


def held_out(doc_id):
    return hashlib.sha256(doc_id.encode()).digest()[-1] < 26


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    out = argv[1]
    missing = [p for p in (PY_DOCS, FORTUNES) if not os.path.isdir(p)]
    if missing:
        print("prepare_corpus: %s not found: install the Debian packages python3.11-doc and fortunes"
              % ", ".join(missing), file=sys.stderr)
        return 1
    os.makedirs(out, exist_ok=True)
    counts = {"train": [0, 0], "heldout": [0, 0]}
    files = {k: open(os.path.join(out, k + ".jsonl.tmp"), "w", encoding="utf-8") for k in counts}
    for source in (python_docs(), fortunes()):
        for doc_id, text in source:
            part = "heldout" if held_out(doc_id) else "train"
            files[part].write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
            counts[part][0] += 1
            counts[part][1] += len(text.encode())
    for k, f in files.items():
        f.close()
        os.replace(os.path.join(out, k + ".jsonl.tmp"), os.path.join(out, k + ".jsonl"))
    manifest = {k: {"documents": v[0], "bytes": v[1]} for k, v in counts.items()}
    manifest["sources"] = {"python3.11-doc": PY_DOCS, "fortunes": FORTUNES}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print("prepare_corpus: %s: train %d documents (%.1f MB), held-out %d documents (%.1f MB)" % (
        out, counts["train"][0], counts["train"][1] / 1e6, counts["heldout"][0], counts["heldout"][1] / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
