"""Write a corpus of token shards in the companion's format (data_0000.bin of
uint32 ids, data_0000.index.json, meta.json) holding one document of N random
ids of a VOCAB-token vocabulary (default 97, the reference fixtures'; ids
3..VOCAB-1: no <unk>, <s> or </s>), from a seeded generator. Standard
library only.

With DOC_LEN, the N tokens are documents instead, of random lengths up to
2 x DOC_LEN, each opened by <s> (id 1) and closed by </s> (id 2), as the
corpus reader of text corpora makes them: the probe then splits by document
(tests/cli/mpi_analyze.sh, where documents run across shards).

usage: random_shards.py OUT_DIR N_TOKENS SEED [VOCAB [DOC_LEN]]
Used by tests/cli/record_resume.sh, tests/cli/record_disk_full.sh,
tests/cli/pattern_heads.sh, tests/cli/tpp_pattern.sh (VOCAB 89, tpp2's),
tests/cli/mpi_analyze.sh (DOC_LEN) and scripts/valgrind-e2e.sh."""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from testdata import write_shards  # noqa: E402  (the shard layout, once)

out, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
vocab = int(sys.argv[4]) if len(sys.argv) > 4 else 97
doc_len = int(sys.argv[5]) if len(sys.argv) > 5 else 0
rng = random.Random(seed)
ids, docs = [rng.randrange(3, vocab) for _ in range(n)], [n]
if doc_len:
    docs, at = [], 0
    while at < n:
        k = min(n - at, rng.randrange(3, 2 * doc_len + 1))
        ids[at], ids[at + k - 1] = 1, 2
        docs.append(k)
        at += k
write_shards(out, ids, vocab, docs)
