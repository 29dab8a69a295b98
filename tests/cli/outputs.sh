#!/usr/bin/env bash
# Outputs never replace inputs, and a killed writer leaves nothing that
# lasts (issue #17.3, #17.12):
#   - export-notebook --out the store itself, or another name of it (a hard
#     link), is refused in one line and the store is unchanged; an existing
#     file that is not a notebook is replaced only with --force, a notebook is
#     replaced (the documented rule);
#   - export and plot into a folder where the store sits under the name of
#     one of their outputs are refused, the store unchanged;
#   - SIGKILL of plot while gnuplot renders: gnuplot, in its own process
#     group, is killed with it (its parent-death signal), and the next plot
#     removes the temporary image left behind; export removes the temporary
#     files of dead writers and keeps those of live ones.
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
gpnm1_scratch cli_outputs shards; cd "$dir"
sum() { sha256sum < "$1" | cut -c1-16; }
# refused WHAT FILE CMD...: exit 1, one line on stderr, FILE's bytes unchanged
refused() {
  local what="$1" file="$2"; shift 2
  local before; before="$(sum "$file")"
  "$@" > /dev/null 2> err.txt; local rc=$?
  if [[ $rc -eq 1 && $(wc -l < err.txt) -eq 1 && "$(sum "$file")" == "$before" ]]; then ok "$what: $(cat err.txt)"
  else bad "$what: exit $rc, $file $( [[ "$(sum "$file")" == "$before" ]] && echo unchanged || echo CHANGED): $(cat err.txt)"; fi
}

random_shards shards $((16 * 48)) 3
"$bin" record --model "$model" --corpus shards --seq-len 48 --db x.db --states pred --quiet > /dev/null || bad "record"
"$bin" analyze x.db > /dev/null || bad "analyze"
cp x.db k.db # the store of the kill and temporary-file checks, whatever happens to x.db

# ---- export-notebook ----
refused "export-notebook --out the store" x.db "$bin" export-notebook x.db --out x.db
grep -q "is an input" err.txt || bad "the message says the output is the input: $(cat err.txt)"
ln x.db hard.db
refused "export-notebook --out a hard link of the store" x.db "$bin" export-notebook x.db --out hard.db
ln -s x.db soft.db
refused "export-notebook --out a symbolic link to the store" x.db "$bin" export-notebook x.db --out soft.db
[[ "$(sqlite3 x.db "pragma integrity_check")" == ok ]] && ok "the store is intact" || bad "the store is damaged"
# ---- compare --out: compare.json, compare.ipynb and their temporaries are outputs too (issue 35.7) ----
mkdir -p cj ci ct cs
cp x.db cj/compare.json; cp x.db ci/compare.ipynb; cp x.db ct/compare.json.tmp; cp x.db cs/x.db; ln -s x.db cs/compare.json
refused "compare --out DIR with the store at DIR/compare.json" cj/compare.json "$bin" compare cj/compare.json:1 cj/compare.json:1 --out cj --no-render
refused "compare --out DIR with the store at DIR/compare.ipynb" ci/compare.ipynb "$bin" compare ci/compare.ipynb:1 ci/compare.ipynb:1 --out ci --no-render
refused "compare --out DIR with the store at DIR/compare.json.tmp" ct/compare.json.tmp "$bin" compare ct/compare.json.tmp:1 ct/compare.json.tmp:1 --out ct --no-render
refused "compare --out DIR with DIR/compare.json a link to the store" cs/x.db "$bin" compare cs/x.db:1 cs/x.db:1 --out cs --no-render
echo "my notes" > notes.txt
refused "export-notebook --out an existing file that is not a notebook" notes.txt "$bin" export-notebook x.db --out notes.txt
grep -q -- "--force" err.txt || bad "the message names --force: $(cat err.txt)"
"$bin" export-notebook x.db --out notes.txt --force > /dev/null 2> err.txt && "$py" -c "import json; json.load(open('notes.txt'))['nbformat']" &&
  ok "--force replaces it with the notebook" || bad "--force: $(cat err.txt)"
"$bin" export-notebook x.db --out nb.ipynb > /dev/null && "$bin" export-notebook x.db --out nb.ipynb > /dev/null 2> err.txt &&
  ok "an existing notebook is replaced without --force" || bad "re-export: $(cat err.txt)"

# ---- export and plot: the store under an output's name in the folder ----
mkdir -p e p
cp x.db e/runs.csv
refused "export where the store is the folder's runs.csv" e/runs.csv "$bin" export e/runs.csv --out e --format csv
ln x.db e/manifest.json
refused "export where a hard link of the store is manifest.json" x.db "$bin" export x.db --out e --format npy
cp x.db p/report.md
refused "plot where the store is the folder's report.md" p/report.md "$bin" plot p/report.md --out p --no-render
cp x.db p/horizons.png
"$bin" plot p/horizons.png --out p --gnuplot /bin/true > /dev/null 2> err.txt
[[ "$(sum p/horizons.png)" == "$(sum x.db)" ]] && ok "plot never renders over (or removes) the store named horizons.png" ||
  bad "plot replaced the store named horizons.png: $(cat err.txt)"

# ---- a killed plot ----
# a gnuplot that writes half an image where it is told, says where it is, and waits
cat > slowgp <<'EOF'
#!/bin/sh
out=$(printf '%s' "$2" | sed "s/.*out='\([^']*\)'.*/\1/")
printf 'half an image' > "$out"
echo $$ > "$GP_PIDFILE"
exec sleep 300
EOF
chmod +x slowgp
rm -f gp.pid
GP_PIDFILE="$dir/gp.pid" "$bin" plot k.db --out k --gnuplot ./slowgp > /dev/null 2>&1 &
plot_pid=$!
while [[ ! -s gp.pid ]] && kill -0 "$plot_pid" 2>/dev/null; do sleep 0.01; done
gp="$(cat gp.pid 2>/dev/null)"
if [[ -n "$gp" ]]; then
  pg="$(awk '{print $5}' /proc/"$gp"/stat 2>/dev/null)"
  [[ "$pg" == "$gp" ]] && ok "gnuplot runs in its own process group" || bad "gnuplot's process group is $pg, not its own ($gp)"
  kill -9 "$plot_pid"; wait "$plot_pid" 2>/dev/null
  # the parent-death signal is sent while plot exits, before the shell can
  # reap it: gnuplot is now gone, a zombie, or has SIGKILL pending (no timing)
  st="$(awk '/^State:/ {print $2}' /proc/"$gp"/status 2>/dev/null)"
  pend="$(awk '/^(SigPnd|ShdPnd):/ {print $2}' /proc/"$gp"/status 2>/dev/null | tr '\n' ' ')"
  killed=0
  [[ -z "$st" || "$st" == Z || "$st" == X ]] && killed=1
  for m in $pend; do (( (16#$m & 0x100) != 0 )) && killed=1; done
  [[ $killed -eq 1 ]] && ok "SIGKILL of plot kills gnuplot too (state ${st:-gone})" ||
    { bad "gnuplot (pid $gp) outlived the killed plot: state $st, pending $pend"; kill -9 "$gp" 2>/dev/null; }
  ls -A k | grep -q '^\..*\.tmp\.' && ok "the killed plot left a temporary image: $(ls -A k | grep '\.tmp\.' | tr '\n' ' ')" ||
    bad "no temporary file left to clean (the test needs one): $(ls -A k)"
  "$bin" plot k.db --out k --no-render > /dev/null 2> err.txt || bad "plot after the kill: $(cat err.txt)"
  [[ -z "$(ls -A k | grep '\.tmp\.')" ]] && ok "the next plot removed the dead plot's temporary files" ||
    bad "temporary files remain: $(ls -A k | grep '\.tmp\.' | tr '\n' ' ')"
else
  bad "the fake gnuplot never started"; kill -9 "$plot_pid" 2>/dev/null; wait "$plot_pid" 2>/dev/null
fi

# ---- export: temporary files of a dead writer go, a live writer's stay ----
mkdir -p c
true & dead=$!; wait $dead
printf x > "c/.tokens.csv.tmp.$dead.0"; printf x > "c/.heads.csv.tmp.$$.3"
"$bin" export k.db --out c --format csv > /dev/null 2> err.txt || bad "export: $(cat err.txt)"
[[ ! -e "c/.tokens.csv.tmp.$dead.0" && -e "c/.heads.csv.tmp.$$.3" ]] &&
  ok "export removed a dead writer's temporary file and kept a live one's" || bad "temporary files in c: $(ls -A c | grep tmp)"

finish
