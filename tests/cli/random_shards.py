"""Write a corpus of token shards in the companion's format (data_0000.bin of
uint32 ids, data_0000.index.json, meta.json) holding one document of N random
ids of a VOCAB-token vocabulary (default 97, the reference fixtures'; ids
3..VOCAB-1: no <unk>, <s> or </s>), from a seeded generator. Standard
library only.

usage: random_shards.py OUT_DIR N_TOKENS SEED [VOCAB]
Used by tests/cli/record_resume.sh, tests/cli/record_disk_full.sh,
tests/cli/pattern_heads.sh, tests/cli/tpp_pattern.sh (VOCAB 89, tpp2's) and
scripts/valgrind-e2e.sh."""
import json
import random
import struct
import sys

out, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
vocab = int(sys.argv[4]) if len(sys.argv) > 4 else 97
rng = random.Random(seed)
with open(out + "/data_0000.bin", "wb") as f:
    f.write(struct.pack("<%dI" % n, *[rng.randrange(3, vocab) for _ in range(n)]))
with open(out + "/data_0000.index.json", "w") as f:
    json.dump([n], f)
with open(out + "/meta.json", "w") as f:
    json.dump({"tokenizer": "fixture", "vocab_size": vocab, "total_tokens": n, "total_docs": 1, "num_shards": 1}, f)
