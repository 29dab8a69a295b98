// Build a Hugging Face tokenizer.json (BPE, the layout of LLaMA-2's own
// tokenizer.json) from the vocabulary and merges that llama-tokenizer-js
// carries.  Usage: node fetch-tokenizer.mjs PACKAGE_DIR > llama2-tokenizer.json
//
// The output is written by hand, not with JSON.stringify on one object,
// so that the vocabulary keeps id order (a JS object would move keys such as
// "0" or "123" to the front) and the bytes, and so the checksum, are stable.
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const dir = process.argv[2];
if (!dir) { console.error('usage: node fetch-tokenizer.mjs PACKAGE_DIR'); process.exit(2); }
const mod = await import(pathToFileURL(path.join(dir, 'llama-tokenizer.js')).href);
const tok = mod.default;
const vocab = tok.vocabById;
const fail = (m) => { console.error('fetch-tokenizer.mjs: ' + m); process.exit(1); };
if (vocab.length !== 32000) fail(`expected 32000 pieces, found ${vocab.length}`);
if (new Set(vocab).size !== vocab.length) fail('duplicate pieces in the vocabulary');
if (vocab[0] !== '<unk>' || vocab[1] !== '<s>' || vocab[2] !== '</s>') fail('unexpected special pieces');

// The package keeps merges as a Map "left right" -> priority; priority order
// is merge rank (lower first).
const merges = [...tok.merges.entries()].sort((a, b) => a[1] - b[1]).map(([k]) => k);
for (const m of merges) {
    const parts = m.split(' ');
    if (parts.length !== 2) fail(`merge "${m}" is not two pieces`);
    for (const p of parts) if (!tok.vocabByString.has(p)) fail(`merge "${m}" uses unknown piece "${p}"`);
    if (!tok.vocabByString.has(parts[0] + parts[1])) fail(`merge "${m}" makes a piece not in the vocabulary`);
}

const q = (s) => JSON.stringify(s);
const special = (id, s) =>
    `    {"id": ${id}, "content": ${q(s)}, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}`;
const out = [];
out.push('{');
out.push('  "version": "1.0",');
out.push('  "truncation": null,');
out.push('  "padding": null,');
out.push('  "added_tokens": [');
out.push([special(0, '<unk>'), special(1, '<s>'), special(2, '</s>')].join(',\n'));
out.push('  ],');
out.push('  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"}, ' +
         '{"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},');
out.push('  "pre_tokenizer": null,');
out.push('  "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, ' +
         '{"Sequence": {"id": "A", "type_id": 0}}], "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, ' +
         '{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<s>", "type_id": 1}}, ' +
         '{"Sequence": {"id": "B", "type_id": 1}}], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},');
out.push('  "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, ' +
         '{"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},');
out.push('  "model": {');
out.push('    "type": "BPE",');
out.push('    "dropout": null,');
out.push('    "unk_token": "<unk>",');
out.push('    "continuing_subword_prefix": null,');
out.push('    "end_of_word_suffix": null,');
out.push('    "fuse_unk": true,');
out.push('    "byte_fallback": true,');
out.push('    "vocab": {');
out.push(vocab.map((p, i) => `      ${q(p)}: ${i}`).join(',\n'));
out.push('    },');
out.push('    "merges": [');
out.push(merges.map((m) => `      ${q(m)}`).join(',\n'));
out.push('    ]');
out.push('  }');
out.push('}');
process.stdout.write(out.join('\n') + '\n');
