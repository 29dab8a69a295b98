// gpnscope view: draws the data in #gpnscope-data (view/view_data.c). No
// network, no libraries. Hover a token for its values and its logit lens;
// click it for its exact effective attention over earlier tokens and its
// direct logit attribution. A hash "#select=RUN,WINDOW,POS" hovers and clicks
// that token once drawn; "&colour=Q&head=H&attn=L:H" picks the colour, the
// site's head and the attention panel (tests/cli/view.sh drives the page so).
'use strict';
const DATA = JSON.parse(document.getElementById('gpnscope-data').textContent);
const QUANTITIES = {
  nll: 'NLL of the token (nats)', entropy: 'entropy of the prediction (nats)',
  norm: "the state's norm ||s||", proj: "the state's projection on s_bar (the mean direction)",
  pc1: "the centered state's projection on PC1, (s - s_bar) . pc1"
};
// every per-head scalar site any run recorded: "site:NAME" colours by it (one head, or their mean)
for (const r of DATA.runs) for (const x of r.sites || []) QUANTITIES['site:' + x.site] = `${x.site} (per head)`;
// attn: the (layer, head) of the attention panel, as "L:H"; siteHead: -1 the mean over heads
const state = { run: 'all', window: 0, quantity: 'nll', attn: null, siteHead: -1, selected: null };

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else if (k.startsWith('data-')) e.setAttribute(k, v); else e[k] = v;
  }
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}
// a piece in a table: its space (U+2581) shown as U+2423
const shown = p => JSON.stringify(p).replace(/\u2581/g, '\u2423');
const fmt = (v, d = 4) => (v === null || v === undefined) ? '-' : Number(v).toPrecision(d);

// a piece as the text it stands for: LLaMA's U+2581 is a space, <0x0A> a newline;
// a run without a tokenizer's pieces shows the ids
function pieceText(p, id) {
  if (!p) return `#${id} `;
  if (p === '<0x0A>') return '\u21b5\n';
  if (p === '<0x09>') return '\u21e5\t';
  if (/^<0x[0-9A-F]{2}>$/.test(p) || p === '<s>' || p === '</s>' || p === '<unk>') return p;
  return p.replace(/\u2581/g, ' ');
}

// white to red for a quantity; blue-white-red for attention weights
function seqColour(t) {
  t = Math.max(0, Math.min(1, t));
  return `rgb(255,${Math.round(255 - 170 * t)},${Math.round(255 - 200 * t)})`;
}
function divColour(t) {
  t = Math.max(-1, Math.min(1, t));
  return t >= 0 ? `rgb(255,${Math.round(255 - 200 * t)},${Math.round(255 - 200 * t)})`
                : `rgb(${Math.round(255 + 200 * t)},${Math.round(255 + 120 * t)},255)`;
}

// a token's value of quantity q: a field of the token, or a per-head site's value (one head or the mean)
function valueOf(run, win, t, q) {
  if (!q.startsWith('site:')) return t[q];
  const site = (run.sites || []).find(x => 'site:' + x.site === q);
  const w = site ? run.windows.indexOf(win) : -1, v = w >= 0 ? site.values[w] : null;
  if (!v || (t.pos + 1) * site.heads > v.length) return null;
  if (state.siteHead >= 0) return state.siteHead < site.heads ? v[t.pos * site.heads + state.siteHead] : null;
  let sum = 0, n = 0;
  for (let h = 0; h < site.heads; h++) { const x = v[t.pos * site.heads + h]; if (x !== null) { sum += x; n++; } }
  return n ? sum / n : null;
}
function attnKey() { if (!state.attn) return null; const [l, h] = state.attn.split(':').map(Number); return { layer: l, head: h }; }

function runs() { return state.run === 'all' ? DATA.runs : DATA.runs.filter(r => String(r.id) === String(state.run)); }
function windowOf(run) { return run.windows[Math.min(state.window, run.windows.length - 1)]; }

function matrixFor(run, window, kind) {
  const a = run.attention, k = attnKey();
  if (!a || !k) return null;
  const m = a.matrices.find(x => x.window === window && x.layer === k.layer && x.head === k.head);
  return m && m[kind] ? { n: m.n, w: m[kind] } : null;
}

function drawControls() {
  const h = document.querySelector('header');
  h.textContent = '';
  h.append(el('h1', {}, `gpnscope view · ${DATA.store}`));
  const runSel = el('select', { id: 'run-select' }, el('option', { value: 'all' }, 'all runs, side by side'));
  for (const r of DATA.runs) runSel.append(el('option', { value: r.id }, `run ${r.id} · ${r.model} (${r.arch})`));
  runSel.value = String(state.run);
  runSel.onchange = () => { state.run = runSel.value; state.selected = null; draw(); };
  const nWindows = Math.max(0, ...DATA.runs.map(r => r.windows.length));
  const winSel = el('select', { id: 'window-select' });
  for (let i = 0; i < nWindows; i++) winSel.append(el('option', { value: i }, `window ${DATA.runs[0].windows[Math.min(i, DATA.runs[0].windows.length - 1)].window}`));
  winSel.value = String(state.window);
  winSel.onchange = () => { state.window = Number(winSel.value); state.selected = null; draw(); };
  const qSel = el('select', { id: 'quantity-select' });
  for (const [k, v] of Object.entries(QUANTITIES)) qSel.append(el('option', { value: k }, v));
  qSel.value = state.quantity;
  qSel.onchange = () => { state.quantity = qSel.value; draw(); };
  h.append(el('label', {}, 'run ', runSel), el('label', {}, 'window ', winSel), el('label', {}, 'colour: ', qSel));
  if (state.quantity.startsWith('site:')) {
    const nHeads = Math.max(0, ...DATA.runs.flatMap(r => (r.sites || []).filter(x => 'site:' + x.site === state.quantity).map(x => x.heads)));
    const sSel = el('select', { id: 'site-head-select' }, el('option', { value: -1 }, 'mean over heads'));
    for (let x = 0; x < nHeads; x++) sSel.append(el('option', { value: x }, `head ${x}`));
    sSel.value = String(state.siteHead);
    sSel.onchange = () => { state.siteHead = Number(sSel.value); draw(); };
    h.append(el('label', {}, 'of ', sSel));
  }
  const panels = [...new Set(DATA.runs.flatMap(r => r.attention ? r.attention.panels.map(p => `${p.layer}:${p.head}`) : []))]
    .sort((a, b) => { const [la, ha] = a.split(':').map(Number), [lb, hb] = b.split(':').map(Number); return la - lb || ha - hb; });
  if (panels.length) {
    if (state.attn === null || !panels.includes(state.attn)) state.attn = panels[0];
    const aSel = el('select', { id: 'attention-select' });
    for (const x of panels) { const [l, hd] = x.split(':'); aSel.append(el('option', { value: x }, `layer ${l}, head ${hd}`)); }
    aSel.value = state.attn;
    aSel.onchange = () => { state.attn = aSel.value; draw(); };
    h.append(el('label', {}, 'attention of ', aSel));
  }
}

function drawText(run) {
  const win = windowOf(run);
  const box = el('div', { class: 'run', 'data-run': run.id });
  box.append(el('h2', {}, `run ${run.id} · ${run.model} (${run.arch}), window ${win.window}, ${win.tokens.length} tokens`));
  const vals = win.tokens.map(t => valueOf(run, win, t, state.quantity)).filter(v => v !== null && v !== undefined);
  const lo = vals.length ? Math.min(...vals) : 0, hi = vals.length ? Math.max(...vals) : 1;
  const sel = state.selected && state.selected.run === run.id && state.selected.window === win.window ? state.selected : null;
  const att = sel ? matrixFor(run, win.window, 'exact') : null, k = attnKey();
  let amax = 0;
  if (att && sel.pos < att.n) for (let j = 0; j <= sel.pos; j++) amax = Math.max(amax, Math.abs(att.w[sel.pos * att.n + j] || 0));
  const legend = att && sel.pos < att.n
    ? `colour: exact effective attention a_tj of layer ${k.layer}, head ${k.head} from the query at position ${sel.pos} (blue negative, red positive, |a| up to ${fmt(amax, 3)})`
    : `colour: ${QUANTITIES[state.quantity]}${state.quantity.startsWith('site:') ? (state.siteHead >= 0 ? `, head ${state.siteHead}` : ', mean over heads') : ''}, ${fmt(lo, 3)} (white) to ${fmt(hi, 3)} (red)` + (vals.length ? '' : ': not stored for this run');
  box.append(el('div', { class: 'legend' }, legend));
  const text = el('div', { class: 'text' });
  for (const t of win.tokens) {
    const s = el('span', { class: 'tok', id: `tok-${run.id}-${win.window}-${t.pos}`,
                           'data-run': run.id, 'data-window': win.window, 'data-pos': t.pos }, pieceText(t.piece, t.id));
    let colour = '';
    if (att && sel.pos < att.n) {
      if (t.pos <= sel.pos && amax > 0) colour = divColour((att.w[sel.pos * att.n + t.pos] || 0) / amax);
    } else {
      const v = valueOf(run, win, t, state.quantity);
      if (v !== null && v !== undefined && hi > lo) colour = seqColour((v - lo) / (hi - lo));
    }
    if (colour) s.style.background = colour;
    if (sel && sel.pos === t.pos) s.classList.add('selected');
    s.onmouseover = () => showToken(run, win, t);
    s.onclick = () => { state.selected = { run: run.id, window: win.window, pos: t.pos }; draw(); showToken(run, win, t); };
    text.append(s);
  }
  box.append(text);
  return box;
}

function showToken(run, win, t) {
  const info = document.getElementById('info');
  info.textContent = '';
  info.append(el('h3', {}, `run ${run.id} · window ${win.window} · position ${t.pos}`));
  const rows = [['token', `${t.piece ? shown(t.piece) : '#' + t.id} (id ${t.id})`], ['NLL of this token', fmt(t.nll, 6)],
                ['entropy of its prediction', fmt(t.entropy, 6)], ['top-1 prediction here', t.top1 ? shown(t.top1) : '-'],
                [`||${run.state_site}||`, fmt(t.norm, 6)], ['projection on s_bar', fmt(t.proj, 6)],
                ['projection on PC1 (centered)', fmt(t.pc1, 6)]];
  if (state.quantity.startsWith('site:')) rows.push([QUANTITIES[state.quantity] + (state.siteHead >= 0 ? `, head ${state.siteHead}` : ', mean'),
                                                     fmt(valueOf(run, win, t, state.quantity), 6)]);
  const sel = state.selected, k = attnKey();
  if (sel && sel.run === run.id && sel.window === win.window && k) {
    const ex = matrixFor(run, win.window, 'exact'), he = matrixFor(run, win.window, 'heuristic');
    if (ex && sel.pos < ex.n && t.pos <= sel.pos) {
      rows.push([`a(${sel.pos}, ${t.pos}) exact, layer ${k.layer} head ${k.head}`, fmt(ex.w[sel.pos * ex.n + t.pos], 6)]);
      if (he) rows.push([`a(${sel.pos}, ${t.pos}) heuristic`, fmt(he.w[sel.pos * he.n + t.pos], 6)]);
    }
  }
  const table = el('table', { id: 'info-table' });
  for (const [key, v] of rows) table.append(el('tr', {}, el('td', {}, key), el('td', { 'data-key': key }, v)));
  info.append(table);
  info.append(drawLens(run, win, t));
}

// the logit lens of the step that predicted this token, at each site the run recorded as its state
function drawLens(run, win, t) {
  const L = run.lens, box = el('div', { id: 'lens' });
  if (!L) return box;
  if (L.note) { box.append(el('div', { class: 'muted' }, `Logit lens: ${L.note}`)); return box; }
  const w = L.windows.find(x => x.window === win.window);
  if (!w || !w.ids) { box.append(el('div', { class: 'muted' }, `Logit lens: ${w && w.note ? w.note : 'not computed for this window'}`)); return box; }
  const T = w.ids.length / (L.sites.length * L.k);
  const step = L.shift ? `step ${t.pos - 1} (a residual predicts the next token)` : `step ${t.pos} (the state predicts its own token)`;
  box.append(el('div', { class: 'note' }, `Logit lens: the top ${L.k} of each site's decode at ${step}`));
  const table = el('table', { id: 'lens-table' });
  for (let i = 0; i < L.sites.length; i++) {
    const at = (i * T + t.pos) * L.k, cells = [];
    for (let j = 0; j < L.k; j++) {
      const id = w.ids[at + j];
      if (id < 0) continue;
      cells.push(`${L.pieces[id] !== undefined ? shown(L.pieces[id]) : '#' + id} ${fmt(w.logits[at + j], 3)}`);
    }
    const text = cells.length ? cells.join('  ') : (t.pos - L.shift < 0 ? 'no step predicted it' : 'a tie (every logit equal)');
    table.append(el('tr', {}, el('td', {}, L.sites[i]), el('td', { class: 'lens-top', 'data-site': L.sites[i] }, text)));
  }
  box.append(table);
  return box;
}

function drawAttention() {
  const p = el('div', { class: 'panel', id: 'attention' });
  p.append(el('h3', {}, 'Effective attention'));
  const sel = state.selected;
  const run = sel && DATA.runs.find(r => r.id === sel.run);
  if (!DATA.runs.some(r => r.attention)) {
    p.append(el('div', { class: 'muted' }, 'No attention analysis with matrices in this store: run gpnscope attention STORE.'));
    return p;
  }
  if (!run) { p.append(el('div', { class: 'muted' }, 'Click a token to see where its read comes from.')); return p; }
  const ex = matrixFor(run, sel.window, 'exact'), he = matrixFor(run, sel.window, 'heuristic'), k = attnKey();
  if (!ex || sel.pos >= ex.n) {
    p.append(el('div', { class: 'muted' }, `No exact matrix of layer ${k ? k.layer : '-'}, head ${k ? k.head : '-'} of run ${run.id} covers position ${sel.pos} of this window.`));
    return p;
  }
  const win = run.windows.find(w => w.window === sel.window);
  const row = [];
  for (let j = 0; j <= sel.pos; j++) row.push([j, ex.w[sel.pos * ex.n + j], he ? he.w[sel.pos * he.n + j] : null]);
  row.sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
  const table = el('table', { id: 'attention-table' }, el('tr', {}, el('th', {}, 'key'), el('th', {}, 'token'),
                   el('th', {}, 'exact a_tj'), el('th', {}, 'heuristic')));
  for (const [j, a, h] of row.slice(0, 8))
    table.append(el('tr', {}, el('td', {}, j), el('td', {}, win.tokens[j] && win.tokens[j].piece ? shown(win.tokens[j].piece) : '#' + (win.tokens[j] ? win.tokens[j].id : j)),
                    el('td', {}, fmt(a, 4)), el('td', {}, fmt(h, 4))));
  p.append(el('div', { class: 'note' }, `run ${run.id}, layer ${k.layer}, head ${k.head}, query ${sel.pos}: the largest |a_tj| (the text is coloured by all of them)`), table);
  if (run.attention.note) p.append(el('div', { class: 'muted' }, run.attention.note));
  return p;
}

// direct logit attribution of the clicked token: the logit of the recorded token by part, largest |logit| first
function drawAttribution() {
  const p = el('div', { class: 'panel', id: 'attribution' }, el('h3', {}, 'Direct logit attribution'));
  if (!DATA.runs.some(r => r.attribution)) {
    p.append(el('div', { class: 'muted' }, 'None stored: gpnscope attribute STORE (GPN and GPN+M runs).'));
    return p;
  }
  const sel = state.selected, run = sel && DATA.runs.find(r => r.id === sel.run);
  const w = run && run.attribution && run.attribution.windows.find(x => x.window === sel.window);
  const rows = w ? w.rows.filter(r => r[0] === sel.pos) : [];
  if (!rows.length) { p.append(el('div', { class: 'muted' }, sel ? `No attribution stored for run ${sel.run}, window ${sel.window}, position ${sel.pos}.` : 'Click a token to split its logit by part.')); return p; }
  const name = r => r[1] + (r[2] >= 0 ? ` L${r[2]}` : '') + (r[3] >= 0 ? ` h${r[3]}` : '');
  const total = rows.filter(r => r[1] !== 'residual').reduce((a, r) => a + (r[4] || 0), 0);
  rows.sort((a, b) => Math.abs(b[4] || 0) - Math.abs(a[4] || 0));
  const table = el('table', { id: 'attribution-table' }, el('tr', {}, el('th', {}, 'part'), el('th', {}, 'logit')));
  for (const r of rows.slice(0, 12)) table.append(el('tr', {}, el('td', {}, name(r)), el('td', { 'data-part': name(r) }, fmt(r[4], 4))));
  p.append(el('div', { class: 'note' }, `run ${run.id}, position ${sel.pos}: the parts of the recorded token's logit (sum ${fmt(total, 5)}; ${rows.length} parts, the largest 12)`), table);
  return p;
}

function drawVerdicts() {
  const p = el('div', { class: 'panel', id: 'verdicts' }, el('h3', {}, 'Verdicts'));
  for (const run of runs()) {
    if (!run.verdicts.length) { p.append(el('div', { class: 'muted' }, `run ${run.id}: no findings (gpnscope analyze)`)); continue; }
    for (const v of run.verdicts) {
      // the stored scalar (analyses/findings.h): 1 present, 0.5 marginal (pools), 0.25 inconclusive, 0 absent
      const pools = v.key === 'memory_pools';
      const cls = v.value === 1 ? 'present' : v.value === 0.5 ? 'marginal' : v.value === 0.25 ? 'inconclusive' : 'absent';
      const word = cls === 'absent' && pools ? 'not shown' : cls;
      // the sentence's first clause (up to the first '; ') at a glance, the whole sentence on opening
      const note = v.note || '', cut = note.indexOf('; ');
      const body = cut > 0 && note.length > 300
        ? el('details', { class: 'note' }, el('summary', {}, note.slice(0, cut) + ' ...'), note)
        : el('div', { class: 'note' }, note);
      p.append(el('div', { class: 'verdict' }, el('span', { class: 'badge ' + cls }, word),
                  `run ${run.id} · ${v.key.replace(/_/g, ' ')}`, body));
    }
  }
  return p;
}

function drawPatch() {
  const x = DATA.patch;
  const p = el('div', { class: 'panel', id: 'patch' }, el('h3', {}, 'State patching (newest sweep)'));
  if (!x) { p.append(el('div', { class: 'muted' }, 'None stored: gpnscope patch MODEL PAIRS --store STORE.')); return p; }
  const comps = [...new Set(x.rows.map(r => r.component))];
  // positions in order, "every position" (-1) last
  const positions = [...new Set(x.rows.map(r => r.position))].sort((a, b) => (a < 0) - (b < 0) || a - b);
  const clean = x.clean_tokens || [];
  const t = el('table', { class: 'heat' });
  const head = el('tr', {}, el('th', {}, 'component'));
  for (const q of positions) head.append(el('th', { title: String(clean[q] || '') }, q < 0 ? 'all' : q));
  t.append(head);
  for (const name of comps) {
    const tr = el('tr', {}, el('td', {}, name));
    for (const q of positions) {
      const r = x.rows.find(r => r.component === name && r.position === q);
      const v = r ? r.mean_score : null;
      const td = el('td', { title: `mean score ${fmt(v)}` }, v === null ? '' : Number(v).toFixed(1));
      if (v !== null) td.style.background = divColour(v);
      tr.append(td);
    }
    t.append(tr);
  }
  p.append(el('div', { class: 'note' }, `${x.model}: mean score per component and position (0 corrupted, 1 clean)`), t);
  return p;
}

function drawSteer() {
  const x = DATA.steer;
  const p = el('div', { class: 'panel', id: 'steer' }, el('h3', {}, 'Steering (newest sweep)'));
  if (!x) { p.append(el('div', { class: 'muted' }, 'None stored: gpnscope steer MODEL ... --store STORE.')); return p; }
  const t = el('table', {}, el('tr', {}, el('th', {}, 'c'), el('th', {}, 'NLL change'), el('th', {}, 'top-1 changed')));
  for (const r of x.rows) t.append(el('tr', {}, el('td', {}, fmt(r.c, 3)), el('td', {}, fmt(r.delta_nll, 4)), el('td', {}, fmt(r.top1_changed, 3))));
  p.append(el('div', { class: 'note' }, `${x.model}: adding c times the direction to the state`), steerCurve(x.rows), t);
  return p;
}

// the NLL change against c as an inline SVG curve, axes at the data's range, zero marked
function steerCurve(rows) {
  const pts = rows.filter(r => r.c !== null && r.delta_nll !== null).sort((a, b) => a.c - b.c);
  const NS = 'http://www.w3.org/2000/svg', W = 300, H = 150, L = 44, R = 8, T = 8, B = 28;
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('id', 'steer-curve'); svg.setAttribute('width', W); svg.setAttribute('height', H);
  if (pts.length < 2) return svg;
  const xs = pts.map(r => r.c), ys = pts.map(r => r.delta_nll).concat([0]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const X = v => L + (W - L - R) * (v - x0) / ((x1 - x0) || 1), Y = v => H - B - (H - T - B) * (v - y0) / ((y1 - y0) || 1);
  const add = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.append(e); return e;
  };
  add('line', { x1: L, y1: Y(0), x2: W - R, y2: Y(0), stroke: '#bbb', 'stroke-dasharray': '3,3' });
  add('polyline', { points: pts.map(r => `${X(r.c).toFixed(1)},${Y(r.delta_nll).toFixed(1)}`).join(' '), fill: 'none', stroke: '#0072B2', 'stroke-width': 2 });
  for (const r of pts) add('circle', { cx: X(r.c).toFixed(1), cy: Y(r.delta_nll).toFixed(1), r: 2.5, fill: '#0072B2' });
  add('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#333' });
  add('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#333' });
  const label = { 'font-size': 10, fill: '#333' };
  add('text', { ...label, x: L - 4, y: Y(y1) + 4, 'text-anchor': 'end' }, fmt(y1, 3));
  add('text', { ...label, x: L - 4, y: Y(y0) + 4, 'text-anchor': 'end' }, fmt(y0, 3));
  add('text', { ...label, x: L, y: H - B + 12, 'text-anchor': 'middle' }, fmt(x0, 3));
  add('text', { ...label, x: W - R, y: H - B + 12, 'text-anchor': 'end' }, fmt(x1, 3));
  add('text', { ...label, x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle' }, 'c (NLL change up)');
  return svg;
}

function draw() {
  drawControls();
  const texts = document.getElementById('texts'), side = document.getElementById('side');
  texts.textContent = '';
  side.textContent = '';
  for (const run of runs()) if (run.windows.length) texts.append(drawText(run));
  side.append(el('div', { class: 'panel', id: 'info' }, el('div', { class: 'muted' }, 'Hover a token for its values.')));
  side.append(drawAttention(), drawAttribution(), drawVerdicts(), drawPatch(), drawSteer());
}

function start() {
  const app = document.getElementById('app');
  app.textContent = '';
  app.append(el('header'), el('main', {}, el('div', { id: 'texts' }), el('div', { id: 'side' })));
  const m = /select=(\d+),(\d+),(\d+)/.exec(location.hash), opt = key => (new RegExp(`[#&]${key}=([^&]+)`).exec(location.hash) || [])[1];
  if (opt('colour')) state.quantity = decodeURIComponent(opt('colour'));
  if (opt('head')) state.siteHead = Number(opt('head'));
  if (opt('attn')) state.attn = decodeURIComponent(opt('attn'));
  if (m) {
    state.run = m[1];
    const run = DATA.runs.find(r => String(r.id) === m[1]);
    if (run) state.window = Math.max(0, run.windows.findIndex(w => w.window === Number(m[2])));
  }
  draw();
  if (m) {
    const tok = document.getElementById(`tok-${m[1]}-${m[2]}-${m[3]}`);
    if (tok) { tok.dispatchEvent(new MouseEvent('click', { bubbles: true })); }
    const again = document.getElementById(`tok-${m[1]}-${m[2]}-${m[3]}`);
    if (again) again.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
  }
  document.body.setAttribute('data-ms', String(Math.round(performance.now())));
  document.body.setAttribute('data-ready', '1');
}
start();
