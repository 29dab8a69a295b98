// Encode stdin with llama-tokenizer-js the way `gpnscope tokenize` does, for
// parity tests and the benchmark.
//   node encode.mjs PACKAGE_DIR [--time]   stdin: text; stdout: ids per line
// Each input line (split on \n only) is turned into a JS string the way
// SentencePiece's normalizer reads bytes: a valid UTF-8 sequence is its
// character, every byte that does not start one is U+FFFD (one per byte;
// a WHATWG TextDecoder would make one U+FFFD per maximal invalid run, which
// SentencePiece does not). Then encode(line, add_bos_token=false,
// add_preceding_space=true): no BOS, SentencePiece's dummy prefix.
// --time: print only "SECONDS BYTES TOKENS" of the encode calls (no output
// of ids), for bench/tokenize.
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import fs from 'node:fs';

const dir = process.argv[2];
const timeOnly = process.argv.includes('--time');
const mod = await import(pathToFileURL(path.join(dir, 'llama-tokenizer.js')).href);
const tok = mod.default;

function spDecode(b, start, end) {
    let s = '';
    const parts = [];
    let i = start;
    while (i < end) {
        const c = b[i];
        let n = 0, cp = 0;
        if (c < 0x80) { n = 1; cp = c; }
        else if ((c & 0xE0) === 0xC0 && end - i >= 2 && (b[i + 1] & 0xC0) === 0x80) {
            cp = ((c & 0x1F) << 6) | (b[i + 1] & 0x3F);
            if (cp >= 0x80) n = 2;
        } else if ((c & 0xF0) === 0xE0 && end - i >= 3 && (b[i + 1] & 0xC0) === 0x80 && (b[i + 2] & 0xC0) === 0x80) {
            cp = ((c & 0x0F) << 12) | ((b[i + 1] & 0x3F) << 6) | (b[i + 2] & 0x3F);
            if (cp >= 0x800 && !(cp >= 0xD800 && cp < 0xE000)) n = 3;
        } else if ((c & 0xF8) === 0xF0 && end - i >= 4 && (b[i + 1] & 0xC0) === 0x80 && (b[i + 2] & 0xC0) === 0x80 &&
                   (b[i + 3] & 0xC0) === 0x80) {
            cp = ((c & 0x07) << 18) | ((b[i + 1] & 0x3F) << 12) | ((b[i + 2] & 0x3F) << 6) | (b[i + 3] & 0x3F);
            if (cp >= 0x10000 && cp <= 0x10FFFF) n = 4;
        }
        if (n === 0) { cp = 0xFFFD; n = 1; }
        parts.push(String.fromCodePoint(cp));
        if (parts.length >= 4096) { s += parts.join(''); parts.length = 0; }
        i += n;
    }
    return s + parts.join('');
}

const buf = fs.readFileSync(0);
const lines = [];
let start = 0;
for (let i = 0; i < buf.length; i++)
    if (buf[i] === 0x0A) { lines.push(spDecode(buf, start, i)); start = i + 1; }
if (start < buf.length) lines.push(spDecode(buf, start, buf.length));

if (timeOnly) {
    let tokens = 0;
    const t0 = process.hrtime.bigint();
    for (const l of lines) tokens += tok.encode(l, false, true).length;
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    process.stdout.write(`${secs} ${buf.length} ${tokens}\n`);
} else {
    const out = [];
    for (const l of lines) out.push(tok.encode(l, false, true).join(' '));
    process.stdout.write(out.join('\n') + (out.length ? '\n' : ''));
}
