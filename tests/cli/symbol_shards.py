"""Write a corpus of token shards in the companion's format (data_0000.bin of
uint32 ids, data_0000.index.json, meta.json) holding one document of N ids
drawn uniformly from 0..SYMBOLS-1 by a seeded generator, with meta.json's
tokenizer named TOKENIZER: the input a task model (MLP-LDRU over a task's
alphabet, e.g. parity's two symbols) is recorded on. Standard library only;
random_shards.py is the same for language-model vocabularies (ids from 3 up).

usage: symbol_shards.py OUT_DIR N_TOKENS SEED SYMBOLS TOKENIZER
Used by tests/cli/ldru_train.sh and tests/cli/lm_only.sh."""
import json
import random
import struct
import sys

out, n, seed, symbols, tokenizer = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rng = random.Random(seed)
with open(out + "/data_0000.bin", "wb") as f:
    f.write(struct.pack("<%dI" % n, *[rng.randrange(0, symbols) for _ in range(n)]))
json.dump([n], open(out + "/data_0000.index.json", "w"))
json.dump({"tokenizer": tokenizer, "vocab_size": symbols, "total_tokens": n, "total_docs": 1, "num_shards": 1},
          open(out + "/meta.json", "w"))
