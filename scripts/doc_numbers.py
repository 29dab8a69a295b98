#!/usr/bin/env python3
"""The numbers docs/ quotes about the shipped models, checked against (or
rewritten from) a demo's output: `gpnscope demo --out DIR` (its study.db and
compare/compare.json).

Each quoted number carries a marker, invisible on the rendered page, naming
the value it quotes:

    0.908<!--=gpnm15-small.default_direction.batch_cos_mean-->

and each table drawn from compare sits between

    <!--gen:compare-table-->  ...  <!--/gen-->

Names (docs/analyses.md, "Numbers in these docs", lists them):
    MODEL.perplexity, MODEL.mean_nll, MODEL.tokens   the demo run of models/MODEL
    MODEL.untrained.ANALYSIS.KEY, MODEL.shuffled.ANALYSIS.KEY   its controls' (gpnscope controls)
    MODEL.ANALYSIS.KEY        analysis_values of that run (e.g. retention.separation)
    MODEL.ANALYSIS.SERIES.I   point I of a stored series (retention.tau_param.6: head 6)
    WORD<!--~MODEL.findings.STRUCTURE-->  the verdict word of a finding
                              (default_direction, content_horizon, memory_pools)
    cmp.MODEL[.LN].PATH       compare.json's row of MODEL (layer N), PATH into it
                              (default_direction.batch_cos.lo, memory_pools.heads, ...)
    exp(NAME), abs(NAME)      of one of the above
A name prefixed `S:` reads the demo given as `--demo S=DIR` instead of the
plain `--demo DIR`. A quoted number keeps its digits, its sign and its
thousands separators when rewritten; the check accepts it when it is the value
rounded to those digits (half a unit of the last digit, so a value on a
rounding boundary may print either way on another machine).

  doc_numbers.py --check [--demo [S=]DIR]... [FILE.md...]   exit 1 listing every drifted number
  doc_numbers.py --write [--demo [S=]DIR]... [FILE.md...]   rewrite them in place
FILEs default to the docs that carry markers (docs/*.md).
"""
import argparse
import glob
import json
import math
import os
import re
import sqlite3
import sys

# a '-' right after a digit or a marker is a range's dash (0.87-0.92), not a sign
MARK = re.compile(r"((?:(?<!-->)(?<![\d.])[+-])?\d[\d,]*(?:\.\d+)?)<!--=([^>]+?)-->")
WORD = re.compile(r"(present|absent|inconclusive|not demonstrated|not shown|marginal|not measured)(\*\*)?<!--~([^>]+?)-->")
GEN = re.compile(r"(<!--gen:([a-z-]+)(?::([A-Za-z0-9_]+))?-->\n)(.*?)(<!--/gen-->)", re.S)


def model_name(path):
    """models/NAME/model.safetensors -> NAME"""
    return os.path.basename(os.path.dirname(path)) if path else "?"


def flatten(prefix, x, out):
    if isinstance(x, dict):
        for k, v in x.items():
            flatten(f"{prefix}.{k}", v, out)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            flatten(f"{prefix}.{i}", v, out)
    elif isinstance(x, (int, float)) and not isinstance(x, bool) and x is not None:
        out[prefix] = float(x)


def load_demo(d):
    db = os.path.join(d, "study.db")
    if not os.path.exists(db):
        sys.exit(f"doc_numbers: {db} is missing: run `gpnscope demo --out {d}` first")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    values = {}
    runs = con.execute("select r.id, m.path, json_extract(r.settings, '$.control.kind'), "
                       "json_extract(r.settings, '$.control.of') from runs r join models m on m.id = r.model_id "
                       "where r.status = 'complete' order by r.id").fetchall()
    names = {run: model_name(path) for run, path, kind, of in runs if kind is None}
    for run, path, kind, of in runs:
        # a control (gpnscope controls) is MODEL.KIND: gpnm15-small.untrained.default_direction.norm_ratio
        m = model_name(path) if kind is None else f"{names.get(of, 'run%d' % of)}.{kind}"
        nll, n = con.execute("select avg(nll), count(nll) from tokens where run_id = ?", (run,)).fetchone()
        if n:
            values[f"{m}.mean_nll"] = nll
            values[f"{m}.perplexity"] = math.exp(nll)
            values[f"{m}.tokens"] = float(n)
        # the newest analysis of each name (the demo writes one)
        for name, key, v in con.execute(
                "select analysis, key, value from analysis_values v where run_id = ? and analysis_id = "
                "(select max(id) from analyses a where a.run_id = v.run_id and a.name = v.analysis)", (run,)):
            if v is not None:
                values[f"{m}.{name}.{key}"] = float(v)
        # per-head series (retention's tau_param, e_fold_time, ...): MODEL.ANALYSIS.SERIES.IDX
        for name, series, idx, y in con.execute(
                "select a.name, s.series, s.idx, s.y from analysis_series s join analyses a on a.id = s.analysis_id "
                "where a.run_id = ? and a.id = (select max(id) from analyses b where b.run_id = a.run_id and "
                "b.name = a.name) and s.series not like 'R\\_%' escape '\\'", (run,)):
            if y is not None:
                values[f"{m}.{name}.{series}.{idx}"] = float(y)
        for key, note in con.execute(
                "select key, note from analysis_values v where run_id = ? and analysis = 'findings' and analysis_id = "
                "(select max(id) from analyses a where a.run_id = v.run_id and a.name = 'findings')", (run,)):
            if note and ":" in note:
                values[f"{m}.findings.{key}.word"] = note.split(":", 1)[0]
    con.close()
    cmp_path = os.path.join(d, "compare", "compare.json")
    rows = []
    if os.path.exists(cmp_path):
        with open(cmp_path) as f:
            rows = json.load(f)["rows"]
        for r in rows:
            p = f"cmp.{r['model']}" + (f".L{r['layer']}" if r.get("layer") is not None else "")
            flatten(p, {k: v for k, v in r.items() if k != "curves"}, values)
    return values, rows


def resolve_word(name, demos):
    src = ""
    if ":" in name:
        src, name = name.split(":", 1)
    if src not in demos:
        raise KeyError(f"no --demo {src}=DIR given" if src else "no --demo DIR given")
    w = demos[src][0].get(name + ".word")
    if w is None:
        raise KeyError(f"the demo has no finding {name!r}")
    return w


def resolve(name, demos):
    fn = None
    m = re.fullmatch(r"(exp|abs)\((.+)\)", name)
    if m:
        fn, name = m.group(1), m.group(2)
    src = ""
    if ":" in name:
        src, name = name.split(":", 1)
    if src not in demos:
        raise KeyError(f"no --demo {src}=DIR given" if src else "no --demo DIR given")
    values = demos[src][0]
    if name not in values:
        raise KeyError(f"the demo has no value {name!r}")
    v = values[name]
    return math.exp(v) if fn == "exp" else abs(v) if fn == "abs" else v


def fmt_like(text, v):
    """v printed with the digits, sign and separators of the quoted text"""
    dec = len(text.split(".")[1]) if "." in text else 0
    s = f"{v:,.{dec}f}" if "," in text else f"{v:.{dec}f}"
    if text.startswith("+") and v >= 0:
        s = "+" + s
    return s


def agrees(text, v):
    q = float(text.replace(",", ""))
    dec = len(text.split(".")[1]) if "." in text else 0
    return abs(q - v) <= 0.5 * 10 ** -dec * (1 + 1e-9) + 1e-12


# ---------- generated tables ----------

def num(x, d=3):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"


def interval(n, d=3):
    if n is None:
        return "n/a"
    s = num(n.get("value"), d)
    if n.get("lo") is not None and n.get("hi") is not None:
        s += f" [{num(n['lo'], d)}, {num(n['hi'], d)}]"
    return s


FAMILY = {"gpn+m": "GPN+M", "gpn": "GPN", "transformer++": "Transformer++", "gdn": "GDN",
          "recurrent-transformer": "Recurrent Transformer", "mamba2": "Mamba-2", "elman": "Elman", "ldru": "MLP-LDRU"}


def compare_table(rows):
    out = ["| run | site | default direction: ratio, 8-batch cos, top-SV cos | verdict "
           "| centered lag cos k=1; h_0.02 (tokens) | verdict | pools (fast + slow heads) |",
           "|---|---|---|---|---|---|---|"]
    last = {}
    for r in rows:
        last[r["model"]] = r.get("layer")
    seen = set()
    for r in rows:
        m, layer = r["model"], r.get("layer")
        run = "" if m in seen else f"{FAMILY.get(r['arch'], r['arch'])} ({m})"
        seen.add(m)
        site = f"`{r['site']}`" if layer is None else f"layer {layer}" + (" (last)" if layer == last[m] else "")
        dd, ch, mp = r["default_direction"], r["content_horizon"], r.get("memory_pools") or {}
        ddc = f"{interval(dd['norm_ratio'])}, {interval(dd['batch_cos'])}, {interval(dd['top_sv_cos'])}"
        h = ch["h_002"]
        hc = f"{interval(ch['centered_first'])}; {interval(h, 1)}" + (" (censored)" if ch.get("h_002_censored") else "")
        if mp.get("verdict") == "not measured":
            pools = "no decays" if not mp.get("decay_site") else "not measured"
        else:
            fs = mp.get("from_start", {})
            pools = f"{mp.get('verdict')} ({fs.get('fast_heads', '?')} + {fs.get('slow_heads', '?')})"
        out.append(f"| {run} | {site} | {ddc} | {dd['verdict']} | {hc} | {ch['verdict']} | {pools} |")
    return "\n".join(out) + "\n"


GENERATORS = {"compare-table": compare_table}


def process(path, demos, write):
    with open(path) as f:
        text = f.read()
    problems = []

    def gen(m):
        kind, src, body = m.group(2), m.group(3) or "", m.group(4)
        if kind not in GENERATORS:
            problems.append(f"{path}: unknown generated block {kind!r}")
            return m.group(0)
        if src not in demos:
            problems.append(f"{path}: the {kind} block reads --demo {src + '=' if src else ''}DIR, not given")
            return m.group(0)
        new = GENERATORS[kind](demos[src][1])
        if new != body:
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{path}:{line}: the generated {kind}{':' + src if src else ''} table differs from the demo's")
        return m.group(1) + new + m.group(5)

    text2 = GEN.sub(gen, text)

    def mark(m):
        quoted, name = m.group(1), m.group(2).strip()
        line = text2.count("\n", 0, m.start()) + 1
        try:
            v = resolve(name, demos)
        except KeyError as e:
            problems.append(f"{path}:{line}: {name}: {e.args[0]}")
            return m.group(0)
        if not agrees(quoted, v):
            problems.append(f"{path}:{line}: {name}: the doc says {quoted}, the demo {fmt_like(quoted, v)} ({v:.6g})")
        return fmt_like(quoted, v) + m.group(0)[len(quoted):]

    text3 = MARK.sub(mark, text2)

    def word(m):
        quoted, name = m.group(1), m.group(3).strip()
        line = text3.count("\n", 0, m.start()) + 1
        try:
            w = resolve_word(name, demos)
        except KeyError as e:
            problems.append(f"{path}:{line}: {name}: {e.args[0]}")
            return m.group(0)
        if w != quoted:
            problems.append(f"{path}:{line}: {name}: the doc says {quoted}, the demo {w}")
        return w + m.group(0)[len(quoted):]

    text3 = WORD.sub(word, text3)
    if write and text3 != text:
        with open(path, "w") as f:
            f.write(text3)
    n = len(MARK.findall(text)) + len(WORD.findall(text)) + len(GEN.findall(text))
    return n, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--check", action="store_true", help="list every quoted number that drifted; exit 1 if any")
    g.add_argument("--write", action="store_true", help="rewrite the quoted numbers and tables from the demo")
    ap.add_argument("--demo", action="append", default=[], metavar="[S=]DIR", help="a demo's --out directory")
    ap.add_argument("files", nargs="*", help="markdown files (default: docs/*.md)")
    a = ap.parse_args()
    demos = {}
    for spec in a.demo:
        src, d = spec.split("=", 1) if "=" in spec and not os.path.exists(spec) else ("", spec)
        demos[src] = load_demo(d)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = a.files or sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    total, problems = 0, []
    for p in files:
        n, pr = process(p, demos, a.write)
        total += n
        problems += pr
    if a.write:
        unresolved = [p for p in problems if " says " not in p and " differs " not in p]
        for p in unresolved:
            print(p)
        print(f"doc_numbers: {len(problems) - len(unresolved)} of {total} quoted numbers and tables in "
              f"{len(files)} files rewritten from the demo" + (f", {len(unresolved)} unresolved" if unresolved else ""))
        return 1 if unresolved else 0
    for p in problems:
        print(p)
    print(f"doc_numbers: {total} quoted numbers and tables checked, {len(problems)} drifted or unresolved")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
