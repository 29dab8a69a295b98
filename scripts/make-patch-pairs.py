#!/usr/bin/env python3
"""Make the prompt pairs of examples/patch-copy.jsonl (docs/causal.md): a copy
task, where the answer can only come from what the model carried.

Each pair shows six words and then the first three again; the answer is the
fourth word, which only the first showing says. The corrupted prompt has
another word in that place, which is the foil (and the corrupted run's right
answer). Words are lower-case pieces of the shipped tokenizer that are one
token after a space, so clean and corrupted prompts have the same length;
every prompt is checked with `gpnscope tokenize --pieces`.

    scripts/make-patch-pairs.py BUILD/gpnscope > examples/patch-copy.jsonl
    (options: --pairs N --seed S --tokenizer FILE)
"""
import argparse, json, random, subprocess, sys

p = argparse.ArgumentParser()
p.add_argument("gpnscope")
p.add_argument("--pairs", type=int, default=32)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--tokenizer", default=None)
a = p.parse_args()

tok_args = ["--tokenizer", a.tokenizer] if a.tokenizer else []
src = a.tokenizer or __file__.rsplit("/scripts/", 1)[0] + "/third_party/llama2-tokenizer.json"
vocab = json.load(open(src))["model"]["vocab"]
# frequent whole words: low ids are the first merges, so the commonest words
words = sorted(k[1:] for k, i in vocab.items() if k.startswith("\u2581") and 5 <= len(k) <= 9 and k[1:].isalpha()
               and k[1:].islower() and 300 <= i < 6000)
rng = random.Random(a.seed)
pairs = []
while len(pairs) < a.pairs:
    w = rng.sample(words, 7)
    seq, alt = w[:6], w[6]
    clean = " ".join(seq + seq[:3])
    corrupted = " ".join(seq[:3] + [alt] + seq[4:] + seq[:3])
    pairs.append({"clean": clean, "corrupted": corrupted, "answer": "\u2581" + seq[3], "foil": "\u2581" + alt})

lines = "\n".join(x for q in pairs for x in (q["clean"], q["corrupted"])) + "\n"
out = subprocess.run([a.gpnscope, "tokenize", "--pieces"] + tok_args, input=lines, capture_output=True, text=True,
                     check=True).stdout.splitlines()
for k, q in enumerate(pairs):
    for text, pieces in ((q["clean"], out[2 * k]), (q["corrupted"], out[2 * k + 1])):
        want = " ".join("\u2581" + x for x in text.split())
        if pieces != want:
            sys.exit("%s tokenizes as %s, not one token a word" % (text, pieces))
print("# %d copy pairs: six words, then the first three again; the answer is the fourth word" % a.pairs)
print("# made by scripts/make-patch-pairs.py --pairs %d --seed %d" % (a.pairs, a.seed))
for q in pairs:
    print(json.dumps(q, ensure_ascii=False))
