#!/usr/bin/env bash
# record --per-document and --per-line (docs/recording.md) on the shipped
# gpnm15-small with the bundled tokenizer: window i is document i, from its
# <s> and a fresh state. Checked with sqlite3 and Python's sqlite3:
#   - each window's token rows are its document's tokens (<s>, gpnscope
#     tokenize's ids, </s>), at its stream offset, with no tokens, head_steps
#     or states row past its end, and a NULL next token on its last row;
#   - each document's NLL equals the NLL of the document recorded alone
#     (1e-5 relative), so neither the padding nor batch-mates leak into it,
#     on the shipped model and on every reference family (random documents
#     of a shard corpus with index files);
#   - the chosen window length (the longest document) and the one-line count
#     of documents cut by --seq-len; sample:K positions among the real ones;
#   - --resume of a partial run (its last windows' rows removed) ends equal to
#     the whole run; the run's settings record the mode, so resuming without
#     it is refused;
#   - --per-line on prompts, one a line; the one-line errors (shards without
#     index files, --per-line on shards, --per-line with --separator);
#   - analyze, compare and view read the store (windows of 3 tokens included);
#   - under MPI (when built with it), 2 ranks merged equal one process.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_sqlite3
shipped_scratch record_documents
cd "$dir"
model="$src/models/gpnm15-small"
q() { sqlite3 "$@"; }

# five documents of different lengths ("Hi" is 3 tokens: <s> Hi </s>), one a paragraph
docs=("The river ran low that summer." "Hi"
      "Their grandmother said the river had been lower once, in the year the mill burned down, and that she remembered the smoke."
      "Some were smooth and grey, some streaked with red." "When autumn came the rain returned.")
printf '%s\n\n' "${docs[@]}" > docs.txt
printf '%s\n' "${docs[@]}" | "$bin" tokenize > ids.txt
# the expected stream: per document "<s> ids </s>" (1 and 2), one line each
awk '{print "1 " $0 " 2"}' ids.txt > want.txt
longest="$(awk '{print NF}' want.txt | sort -n | tail -1)"

rec() { "$bin" record --model "$model" --corpus docs.txt --separator $'\n\n' "$@"; }
rec --db docs.db --per-document --batch 3 --quiet > rec.out && ok "record --per-document: $(cat rec.out)" || bad "record: $(cat rec.out)"
grep -q "5 documents of at most $longest tokens (the longest; --seq-len sets it)" rec.out &&
  ok "the window length is the longest document's ($longest tokens)" || bad "summary: $(cat rec.out)"

# the token rows of each window are its document, nothing past its end
q docs.db "select group_concat(token_id, ' ') from (select window, token_id from tokens order by window, position)
           group by window order by window" > got.txt
diff -q got.txt want.txt >/dev/null && ok "each window's token rows are its document's tokens (tokenize's ids)" ||
  bad "token rows differ: $(diff got.txt want.txt | head -4)"
lens="$(awk '{printf "%s%d", (NR > 1 ? "," : ""), NF}' want.txt)"
[[ "$(q docs.db "select group_concat(n, ',') from (select count(*) n from tokens group by window order by window)")" == "$lens" &&
   "$(q docs.db "select count(*) from tokens t join windows w using (run_id, window) where t.position >= w.n_tokens")" == 0 ]] &&
  ok "no token row past a document's end (lengths $lens)" || bad "token rows past the end"
[[ "$(q docs.db "select group_concat(n_tokens, ',') from (select n_tokens from windows order by window)")" == "$lens" ]] &&
  ok "windows.n_tokens is each document's length" || bad "windows: $(q docs.db 'select * from windows')"
offsets="$(awk '{printf "%s%d", (NR > 1 ? "," : ""), at; at += NF}' want.txt)"
[[ "$(q docs.db "select group_concat(corpus_offset, ',') from (select corpus_offset from windows order by window)")" == "$offsets" ]] &&
  ok "windows.corpus_offset is each document's offset in the stream ($offsets)" || bad "offsets"
for t in head_steps states; do
  n="$(q docs.db "select count(*) from $t x join windows w using (run_id, window) where x.position >= w.n_tokens")"
  all="$(q docs.db "select count(distinct window || ':' || position) from $t")"
  [[ "$n" == 0 && "$all" == "$(awk '{n += NF} END {print n}' want.txt)" ]] && ok "$t: a row at each real position, none past the end" ||
    bad "$t: $n rows past the end, $all positions"
done
[[ "$(q docs.db "select count(*) from tokens t join windows w using (run_id, window)
                 where t.position = w.n_tokens - 1 and t.next_token_id is null")" == 5 &&
   "$(q docs.db "select count(*) from tokens a join tokens b on b.run_id = a.run_id and b.window = a.window and
                 b.position = a.position + 1 where a.next_token_id is not b.token_id")" == 0 ]] &&
  ok "next token: the following row's, NULL (-1) on each document's last row" || bad "next tokens"
[[ "$(q docs.db "select json_extract(settings, '$.window_unit') || ' ' || seq_len from runs")" == "document $longest" ]] &&
  ok "the run's settings say window_unit document, seq_len $longest" || bad "settings: $(q docs.db 'select settings from runs')"

# sample:K draws a window's K positions among its real ones (all of a shorter document's)
rec --db sample.db --per-document --positions sample:4 --quiet > /dev/null
[[ "$(q sample.db "select group_concat(n, ',') from (select count(*) n from states group by window order by window)")" == \
   "$(awk '{printf "%s%d", (NR > 1 ? "," : ""), (NF < 4 ? NF : 4)}' want.txt)" &&
   "$(q sample.db "select count(*) from states s join windows w using (run_id, window) where s.position >= w.n_tokens")" == 0 ]] &&
  ok "--positions sample:4 keeps 4 real positions a document (3 of 'Hi')" || bad "sample:4: $(q sample.db 'select window, position from states')"

# same_nll A B [WINDOW_A WINDOW_B]: every position's NLL of window A of a equals window B's of b (1e-5 relative)
same_nll() {
  "$py" - "$@" <<'PY'
import sqlite3, sys
a, b = sys.argv[1], sys.argv[2]
wa, wb = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (None, None)
def rows(db, w):
    c = sqlite3.connect(db)
    sql = "select window, position, token_id, nll from tokens" + ("" if w is None else f" where window = {w}")
    return {(r[1] if w is not None else (r[0], r[1])): r[2:] for r in c.execute(sql)}
x, y = rows(a, wa), rows(b, wb)
worst = max((abs(x[k][1] - y[k][1]) / max(abs(y[k][1]), 1e-30) for k in x if x[k][1] is not None), default=0)
ok = x.keys() == y.keys() and all(x[k][0] == y[k][0] for k in x) and worst <= 1e-5
print(f"{len(x)} positions, worst relative difference {worst:.2g}")
sys.exit(0 if ok else 1)
PY
}
for i in 0 1 2 3 4; do
  rec --db "alone$i.db" --per-document --skip "$i" --windows 1 --batch 1 --quiet > /dev/null
  if m="$(same_nll docs.db "alone$i.db" "$i" 0)"; then ok "document $i: NLL equals the document recorded alone ($m)"
  else bad "document $i: NLL differs from the document alone: $m"; fi
done

# a document longer than --seq-len is cut there, said in one line
cut=$(( $(awk 'NR == 3 {print NF}' want.txt) - 16 ))
rec --db cut.db --per-document --seq-len 16 --quiet > cut.out
grep -q "5 documents of at most 16 tokens; 1 document was longer, cut at 16: $cut tokens not recorded" cut.out &&
  [[ "$(wc -l < cut.out)" == 1 && "$(q cut.db "select max(n_tokens) || ' ' || count(*) from windows")" == "16 5" ]] &&
  ok "--seq-len 16 cuts one document: $(cat cut.out)" || bad "cut: $(cat cut.out)"

# --resume: the run's last windows taken away (a kill after the first batch), then resumed, ends equal
cp docs.db part.db
q part.db "delete from windows where window >= 3; update runs set status = 'interrupted', windows_done = 3"
rec --db part.db --per-document --batch 3 --resume --quiet > resume.out && ok "--resume continues: $(cat resume.out)" ||
  bad "resume: $(cat resume.out)"
for t in tokens head_steps states windows; do
  cols="$(q docs.db "select group_concat(name, ', ') from pragma_table_info('$t') where name != 'done_at'")"
  n="$(q part.db "attach 'docs.db' as f; select (select count(*) from (select $cols from main.$t except select $cols from f.$t)) +
                  (select count(*) from (select $cols from f.$t except select $cols from main.$t))")"
  [[ "$n" == 0 ]] && ok "after --resume, $t equals the whole run's" || bad "after --resume, $t: $n rows differ"
done
q part.db "update runs set status = 'interrupted'"
fails_in_one_line "resuming without --per-document" "different settings" \
  rec --db part.db --seq-len "$longest" --batch 3 --resume --quiet

# --per-line: prompts, one a line (the empty line skipped)
printf 'What is the capital of France?\n\nTranslate to German: good morning\nOnce upon a time\n' > prompts.txt
grep -v '^$' prompts.txt | "$bin" tokenize | awk '{print "1 " $0 " 2"}' > want_lines.txt
"$bin" record --model "$model" --corpus prompts.txt --db lines.db --per-line --quiet > lines.out
q lines.db "select group_concat(token_id, ' ') from (select window, token_id from tokens order by window, position)
            group by window order by window" > got_lines.txt
diff -q got_lines.txt want_lines.txt >/dev/null && grep -q "3 lines of at most" lines.out &&
  [[ "$(q lines.db "select json_extract(settings, '$.window_unit') from runs")" == line ]] &&
  ok "--per-line: a window per line: $(cat lines.out)" || bad "--per-line: $(cat lines.out); $(diff got_lines.txt want_lines.txt | head -3)"
fails_in_one_line "--per-line with --separator" "not both" \
  "$bin" record --model "$model" --corpus prompts.txt --db x.db --per-line --separator x --quiet

# shards: documents from the index files; without them, or --per-line, one line each
mkdir shards
random_shards shards 1200 4 89 12
"$bin" record --model "$model" --corpus shards --db shards.db --per-document --quiet > shards.out
n_docs="$("$py" -c "import json; print(len(json.load(open('shards/data_0000.index.json'))))")"
[[ "$(q shards.db "select count(*) || ' ' || sum(n_tokens) from windows")" == "$n_docs 1200" ]] &&
  ok "shards by document: $n_docs windows of 1200 tokens in all ($(cat shards.out))" || bad "shards: $(cat shards.out)"
fails_in_one_line "--per-line on shards" "is a shard corpus.*use --per-document" \
  "$bin" record --model "$model" --corpus shards --db x.db --per-line --quiet
mkdir noindex; cp shards/data_0000.bin shards/meta.json noindex/
fails_in_one_line "shards without index files" "has no data_0000.index.json beside it: per-document windows need" \
  "$bin" record --model "$model" --corpus noindex --db x.db --per-document --quiet
[[ ! -e x.db ]] && ok "no store is left by the refused recordings" || bad "x.db was created"

# every reference family: a document's NLL is its NLL alone (the engine runs over the padding)
fam_ok=1
for fam in gpn gpnm1 gdn2 rt2 tpp2; do
  m="$GPNSCOPE_FIXTURES/reference/$fam.weights.safetensors"
  "$bin" record --model "$m" --corpus shards --db "$fam.db" --per-document --windows 6 --batch 4 --quiet > /dev/null
  for i in 0 3 5; do
    "$bin" record --model "$m" --corpus shards --db "$fam.$i.db" --per-document --skip "$i" --windows 1 --batch 1 --quiet > /dev/null
    r="$(same_nll "$fam.db" "$fam.$i.db" "$i" 0)" || { fam_ok=0; echo "$fam document $i: $r"; }
  done
done
[[ $fam_ok == 1 ]] && ok "gpn, gpnm1, gdn2, rt2, tpp2: each document's NLL equals its NLL alone, batched with padding" ||
  bad "a family's NLL depends on the padding or batch-mates"

# the readers
"$bin" analyze docs.db > analyze.out 2> analyze.err && grep -q "states in 5 windows" analyze.out &&
  ok "analyze reads the per-document store" || bad "analyze: $(tail -2 analyze.err)"
"$bin" analyze shards.db > /dev/null 2> analyze2.err && ok "analyze reads the shards' per-document store" ||
  bad "analyze shards.db: $(tail -2 analyze2.err)"
"$bin" compare docs.db lines.db --allow-different-windows --out cmp --no-render --quiet > compare.out 2> compare.err &&
  ok "compare reads it" || bad "compare: $(tail -2 compare.err)"
"$bin" view docs.db --out view > /dev/null 2> view.err && grep -q '"window":1' view/view.html &&
  ok "view shows it" || bad "view: $(cat view.err)"
total="$(awk '{n += NF} END {print n}' want.txt)"
[[ "$(q docs.db "select tokens_done || ' ' || (select count(nll) from tokens) from run_summary")" == "$total $total" ]] &&
  ok "run_summary: $total tokens done, the perplexity over as many NLLs (no padding)" || bad "run_summary"

# MPI: two ranks' shards merged equal one process (bit for bit at the same thread counts, docs/scale.md)
if [[ "${GPNSCOPE_WITH_MPI:-OFF}" == ON ]] && command -v "${GPNSCOPE_MPIEXEC:-mpirun}" >/dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
  # LeakSanitizer (the ASan build) would report Open MPI's own allocations at MPI_Init (as mpi_common.bash says)
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  export GPNSCOPE_THREADS=2 OPENBLAS_NUM_THREADS=1
  "${GPNSCOPE_MPIEXEC:-mpirun}" -q --oversubscribe --allow-run-as-root -n 2 "$bin" record --model "$model" --corpus shards \
    --db mpi.db --per-document --batch 4 --quiet > mpi.out 2> mpi.err &&
    "$bin" merge --quiet merged.db mpi.rank-0-of-2.db mpi.rank-1-of-2.db > /dev/null 2>> mpi.err &&
    "$bin" record --model "$model" --corpus shards --db one.db --per-document --batch 4 --quiet > /dev/null || true
  n=""
  if [[ -s merged.db && -s one.db ]]; then
    n="$(q merged.db "attach 'one.db' as o; select (select count(*) from (select window, position, token_id, nll from tokens
         except select window, position, token_id, nll from o.tokens)) + (select count(*) from (select window, corpus_offset, n_tokens
         from windows except select window, corpus_offset, n_tokens from o.windows)) + (select count(*) from tokens) - (select count(*) from o.tokens)")"
  fi
  [[ "$n" == 0 ]] && ok "MPI: 2 ranks merged equal one process ($(cat mpi.out))" || bad "MPI: $n rows differ; $(cat mpi.err)"
else
  echo "skip: MPI (this build has none)"
fi
finish
