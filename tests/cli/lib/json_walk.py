"""Every number analyze prints has a JSON path (issue 38.5), used by
tests/cli/analyze_json.sh: python3 json_walk.py TEXT JSON STORE.

1. Every scalar the store holds for an analysis is in analyze --json's member
   of that analysis under the same key with the same value (pool_verdict is a
   word there: "present", "inconclusive", "not demonstrated").
2. Every number of the text's "ours" column, and of each verdict's short
   line, is a JSON number to the digits printed (the rule's thresholds, the
   paper's numbers and "95%" are constants, not results, and are left out).
3. The decays-versus-initialisation sentence's numbers are its JSON keys'.
Prints each miss; exits 1 when there is one."""
import json, math, re, sqlite3, sys

text, j, db = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sqlite3.connect(sys.argv[3])
misses = []
run = j["run"]
for name in ("geometry", "default_direction", "horizons", "retention", "probe"):
    aid = db.execute("select max(id) from analyses where run_id = ? and name = ?", (run, name)).fetchone()[0]
    if aid is None:
        continue
    if name not in j:
        misses.append("%s: stored but not in the JSON" % name)
        continue
    for key, v in db.execute("select key, value from analysis_scalars where analysis_id = ? and value is not null", (aid,)):
        got = j[name].get(key)
        if key.startswith("pool_verdict") and isinstance(got, str):
            continue
        if not isinstance(got, (int, float)) or not math.isclose(got, v, rel_tol=1e-12, abs_tol=1e-12):
            misses.append("%s.%s: the store holds %r, the JSON %r" % (name, key, v, got))

leaves = []
def walk(x, path):
    if isinstance(x, bool):
        return
    if isinstance(x, (int, float)):
        leaves.append((float(x), path))
    elif isinstance(x, dict):
        for k, v in x.items():
            walk(v, path + "." + k)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            walk(v, "%s[%d]" % (path, i))
walk({k: v for k, v in j.items() if k != "findings"}, "")

NUM = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")
def path_of(tok, percent):
    v = float(tok)
    mant = tok.split("e")[0].split(".")
    tol = abs(v) * 5e-3 if "e" in tok else 0.5 * 10 ** -(len(mant[1]) if len(mant) > 1 else 0)
    if percent:  # "same split in 68%": the JSON's 0.68
        v, tol = v / 100, tol / 100
    for x, p in leaves:
        if abs(x - v) <= tol * 1.001 + 1e-12:
            return p
    return None
CONSTANTS = re.compile(r"(>=|<|straddles|rule) [-+]?[\d.]+|95%|\bpaper\b.*$|\d+ needed|power [\d.]+ on the paper's")
checked = 0
tables, _, verdicts = text.partition("The paper's three structures")
for line in tables.splitlines() + [v for v in verdicts.splitlines() if re.match(r"  [123]\. ", v)]:
    if re.match(r"  [123]\. ", line):          # a verdict's short line
        part = line.split(": ", 1)[1] if ": " in line else ""
    elif len(line) > 41 and line.startswith("  ") and line[:41].strip():  # a table row: the ours column
        part = line[41:76] if len(line) > 76 and line[75] == " " and line[76] != " " else line[41:]
    else:
        continue
    part = CONSTANTS.sub(" ", part.replace("+-", " "))
    for mt in NUM.finditer(part):
        tok = mt.group(0)
        checked += 1
        if not path_of(tok, part[mt.end():mt.end() + 1] == "%"):
            misses.append("printed %s (in %r) is no JSON number" % (tok, line.strip()[:90]))

r = j.get("retention", {})
m = re.search(r"time constant is ([\d.]+)x, the Spearman of initial and trained time constants ([-+][\d.]+)", text.replace("\n", " ").replace("       ", ""))
if "decays_init_spearman" in r or m:
    if not m or "decays_init_spearman" not in r:
        misses.append("decays vs initialisation: printed %s, JSON keys %s" % (bool(m), [k for k in r if k.startswith("decays")]))
    else:
        if abs(math.exp(r["decays_max_abs_dlog_tau"]) - float(m.group(1))) > 0.006:
            misses.append("decays: printed %sx, JSON exp(decays_max_abs_dlog_tau) %g" % (m.group(1), math.exp(r["decays_max_abs_dlog_tau"])))
        if abs(r["decays_init_spearman"] - float(m.group(2))) > 6e-5:
            misses.append("decays: printed Spearman %s, JSON %g" % (m.group(2), r["decays_init_spearman"]))
for x in misses:
    print("miss:", x)
print("%d printed numbers checked, %d misses" % (checked, len(misses)))
sys.exit(1 if misses or checked < 50 else 0)
