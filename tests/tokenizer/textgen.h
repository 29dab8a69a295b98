/* Deterministic generator of varied text for the tokenizer parity test and
 * benchmark: prose, code, numbers, runs of spaces and tabs, accented Latin,
 * CJK, emoji, other scripts, control characters, literal special-token text
 * and invalid UTF-8, one kind or a mix per line, plus empty and very long
 * lines. Header-only (static functions) so tests and bench share it. */
#ifndef GS_TESTS_TEXTGEN_H
#define GS_TESTS_TEXTGEN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *p;
    size_t n, cap;
    uint64_t rng;
} tg_buf;

static uint64_t tg_next(tg_buf *b) { /* splitmix64 */
    uint64_t z = (b->rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static unsigned tg_below(tg_buf *b, unsigned n) { return (unsigned)(tg_next(b) % n); }

static void tg_bytes(tg_buf *b, const void *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}
static void tg_str(tg_buf *b, const char *s) { tg_bytes(b, s, strlen(s)); }
static void tg_byte(tg_buf *b, unsigned c) { unsigned char x = (unsigned char)c; tg_bytes(b, &x, 1); }

static void tg_cp(tg_buf *b, uint32_t cp) {
    unsigned char o[4];
    int n;
    if (cp < 0x80) { o[0] = (unsigned char)cp; n = 1; }
    else if (cp < 0x800) { o[0] = (unsigned char)(0xC0 | cp >> 6); o[1] = (unsigned char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12); o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        o[0] = (unsigned char)(0xF0 | cp >> 18); o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (unsigned char)(0x80 | (cp & 0x3F)); n = 4;
    }
    tg_bytes(b, o, (size_t)n);
}
static void tg_range(tg_buf *b, uint32_t lo, uint32_t hi) { tg_cp(b, lo + (uint32_t)(tg_next(b) % (hi - lo + 1))); }

#define TG_PICK(b, arr) ((arr)[tg_below((b), sizeof(arr) / sizeof *(arr))])

static const char *tg_words[] = {
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on", "not", "he",
    "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "had", "they", "you", "were", "their", "one",
    "all", "we", "can", "her", "has", "there", "been", "if", "more", "when", "will", "would", "who", "so", "no", "model",
    "language", "state", "memory", "recurrent", "prediction", "grounded", "network", "token", "layer", "vector",
    "perplexity", "training", "gradient", "interpretability", "understanding", "photosynthesis", "electromagnetic",
    "extraordinary", "nevertheless", "approximately", "thermodynamics", "Mississippi", "antidisestablishmentarianism",
    "don't", "it's", "we're", "they've", "o'clock", "well-known", "state-of-the-art", "e.g.", "i.e.", "U.S.", "Dr.",
    "COVID-19", "GPT", "LLaMA", "NASA", "iPhone", "JavaScript", "McDonald's", "x86_64", "Wi-Fi", "AT&T", "Q&A",
};
static const char *tg_punct[] = {",", ".", ";", ":", "!", "?", " -", " --", "...", ")", "\"", "'", " (", " [", "]"};
static const char *tg_accented[] = {
    "café", "naïve", "Ångström", "Straße", "über", "señor", "niño", "façade", "Łódź", "żółć", "Tiếng Việt", "São Paulo",
    "crème brûlée", "Dvořák", "Ørsted", "İstanbul", "résumé", "jalapeño", "Zürich", "Hœnir", "Ærøskøbing", "Þórr",
    "garçon", "déjà vu", "Bjørn", "Kraków", "Škoda", "coöperate", "Māori", "Nguyễn", "Đà Nẵng", "Øresund", "ﬁnancial",
};
static const char *tg_phrases[] = {
    "我们是中国人", "日本語のテキスト", "한국어 문장입니다", "你好，世界！", "東京都渋谷区", "これはテストです。",
    "Привет, мир", "Καλημέρα κόσμε", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก", "∑ᵢ xᵢ² ≤ ∫₀^∞ f(x) dx",
    "√2 ≈ 1.414", "α β γ δ ε", "→ ⇒ ↔ ∀ ∃ ∈ ∉", "┌──┐ │  │ └──┘", "e\xCC\x81t\xC3\xA9", "zero\xE2\x80\x8Bwidth", "\xEF\xBB\xBF" "bom",
    "𝕏 𝔸 𝟙", "𐍈𐌰𐌽𐍃", "𠀀𠀁𪚥", "♠♣♥♦", "½ ¾ ⅓", "€100 £50 ¥1000 ₹500", "\xEF\xBF\xBD" "replacement",
};
static const char *tg_emoji[] = {
    "😀", "😂", "🥲", "❤️", "👍", "👍🏽", "🎉", "🚀", "🔥", "✨", "🤖", "🦙", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷", "🇯🇵", "1️⃣", "☕",
    "🧑🏿‍💻", "✔︎", "⚠️", "🌍", "🐍", "🫠",
};
static const char *tg_specials[] = {"<s>", "</s>", "<unk>", "<0x0A>", "<0xFF>", "▁", "▁▁", "<pad>", "[INST]", "<<SYS>>", "\\n"};
static const char *tg_code[] = {
    "int main(int argc, char **argv) {", "    return 0;", "}", "for (size_t i = 0; i < n; i++) x[i] += y[i] * 2.5f;",
    "def forward(self, x):", "        return self.proj(torch.relu(x))", "import numpy as np", "#include <stdio.h>",
    "if (a != b && c <= d || !e) { goto fail; }", "const x = arr.map((v) => v ** 2).filter(Boolean);",
    "SELECT name, COUNT(*) FROM runs WHERE status = 'done' GROUP BY name;", "<div class=\"row\"><a href=\"/x?y=1&z=2\">link</a></div>",
    "fn main() -> Result<(), Box<dyn Error>> {", "    let v: Vec<u32> = (0..10).collect();", "$ make -j8 && ./run --flag=value",
    "// TODO(alice): handle the empty case", "# comment with trailing spaces   ", "x = {'key': [1, 2, 3], \"k2\": None}",
    "printf(\"%d %s\\n\", n, name);", "@decorator\nclass Foo(Bar):", "    pass", "}}}}}", "))))", "[[[[[[", ">>> 2**10",
    "std::vector<std::unique_ptr<Node>> children;", "a->b->c = &d[0];", "x <<= 3; y >>= 1; z ^= ~w;",
};

static void tg_number(tg_buf *b) {
    char s[64];
    switch (tg_below(b, 9)) {
    case 0: snprintf(s, sizeof s, "%u", (unsigned)tg_below(b, 100000)); break;
    case 1: snprintf(s, sizeof s, "%.3f", (double)tg_below(b, 1000000) / 997.0 - 300); break;
    case 2: snprintf(s, sizeof s, "%.2e", (double)tg_below(b, 100000) * 1.7e-9); break;
    case 3: snprintf(s, sizeof s, "%04u-%02u-%02u", 1900 + tg_below(b, 200), 1 + tg_below(b, 12), 1 + tg_below(b, 28)); break;
    case 4: snprintf(s, sizeof s, "%02u:%02u:%02u", tg_below(b, 24), tg_below(b, 60), tg_below(b, 60)); break;
    case 5: snprintf(s, sizeof s, "0x%08X", (unsigned)tg_next(b)); break;
    case 6: snprintf(s, sizeof s, "$%u,%03u.%02u", tg_below(b, 1000), tg_below(b, 1000), tg_below(b, 100)); break;
    case 7: snprintf(s, sizeof s, "%u.%u.%u", tg_below(b, 10), tg_below(b, 30), tg_below(b, 200)); break;
    default: snprintf(s, sizeof s, "%u%%", tg_below(b, 101)); break;
    }
    tg_str(b, s);
}

static void tg_ws(tg_buf *b) {
    unsigned n = 1 + tg_below(b, tg_below(b, 4) ? 3 : 24);
    for (unsigned i = 0; i < n; i++) tg_byte(b, tg_below(b, 5) ? ' ' : '\t');
}

static void tg_invalid(tg_buf *b) {
    static const char *bad[] = {"\x80", "\xBF", "\xC0\xAF", "\xC1\xBF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xED\xBF\xBF",
                                "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xF8\x88\x80\x80\x80", "\xFE", "\xFF", "\xE2\x82",
                                "\xF0\x9F\x98", "\xC3", "\xE2\x28\xA1", "\xF0\x28\x8C\xBC", "\xC3\x28"};
    if (tg_below(b, 3)) tg_str(b, TG_PICK(b, bad));
    else tg_byte(b, 0x80 + tg_below(b, 128));
}

/* One segment of a given kind. */
static void tg_segment(tg_buf *b, unsigned kind) {
    switch (kind) {
    case 0: { /* prose */
        unsigned n = 3 + tg_below(b, 25);
        for (unsigned i = 0; i < n; i++) {
            const char *w = TG_PICK(b, tg_words);
            if (i == 0 || tg_below(b, 12) == 0) { char c[2] = {(char)(w[0] >= 'a' && w[0] <= 'z' ? w[0] - 32 : w[0]), 0}; tg_str(b, c); tg_str(b, w + 1); }
            else tg_str(b, w);
            if (tg_below(b, 6) == 0) tg_str(b, TG_PICK(b, tg_punct));
            if (i + 1 < n) tg_byte(b, ' ');
        }
        tg_str(b, tg_below(b, 3) ? "." : "?");
        break;
    }
    case 1: { /* code with indentation */
        unsigned n = 1 + tg_below(b, 3);
        for (unsigned i = 0; i < n; i++) {
            unsigned indent = tg_below(b, 4);
            for (unsigned k = 0; k < indent; k++) tg_str(b, tg_below(b, 3) ? "    " : "\t");
            const char *c = TG_PICK(b, tg_code);
            for (; *c; c++) tg_byte(b, *c == '\n' ? ' ' : (unsigned char)*c);
            if (i + 1 < n) tg_str(b, tg_below(b, 2) ? " " : "  ");
        }
        break;
    }
    case 2: { unsigned n = 1 + tg_below(b, 10); for (unsigned i = 0; i < n; i++) { tg_number(b); tg_str(b, tg_below(b, 3) ? " " : ", "); } break; }
    case 3: { unsigned n = 1 + tg_below(b, 8); for (unsigned i = 0; i < n; i++) { tg_ws(b); tg_str(b, TG_PICK(b, tg_words)); } if (tg_below(b, 2)) tg_ws(b); break; }
    case 4: { unsigned n = 2 + tg_below(b, 10); for (unsigned i = 0; i < n; i++) { tg_str(b, tg_below(b, 2) ? TG_PICK(b, tg_accented) : TG_PICK(b, tg_words)); tg_byte(b, ' '); } break; }
    case 5: { /* CJK: common phrases and random characters (many rare: byte fallback) */
        unsigned n = 3 + tg_below(b, 30);
        for (unsigned i = 0; i < n; i++) {
            switch (tg_below(b, 7)) {
            case 0: tg_str(b, TG_PICK(b, tg_phrases)); break;
            case 1: tg_range(b, 0x3041, 0x3096); break;
            case 2: tg_range(b, 0x30A1, 0x30FA); break;
            case 3: tg_range(b, 0xAC00, 0xD7A3); break;
            case 4: tg_range(b, 0x3000, 0x303F); break;
            case 5: tg_range(b, 0x20000, 0x2A6DF); break;
            default: tg_range(b, 0x4E00, 0x9FFF); break;
            }
        }
        break;
    }
    case 6: { /* emoji */
        unsigned n = 1 + tg_below(b, 8);
        for (unsigned i = 0; i < n; i++) {
            if (tg_below(b, 3)) tg_str(b, TG_PICK(b, tg_emoji));
            else tg_range(b, 0x1F300, 0x1FAFF);
            if (tg_below(b, 3) == 0) tg_byte(b, ' ');
        }
        break;
    }
    case 7: { /* invalid UTF-8 inside text */
        unsigned n = 1 + tg_below(b, 6);
        for (unsigned i = 0; i < n; i++) {
            tg_invalid(b);
            if (tg_below(b, 2)) tg_str(b, TG_PICK(b, tg_words));
            if (tg_below(b, 2)) tg_byte(b, ' ');
        }
        break;
    }
    case 8: { /* special-token text, controls, other scripts */
        unsigned n = 1 + tg_below(b, 6);
        for (unsigned i = 0; i < n; i++) {
            switch (tg_below(b, 5)) {
            case 0: tg_str(b, TG_PICK(b, tg_specials)); break;
            case 1: tg_byte(b, "\x01\x7f\r\x1b\x0b\x0c"[tg_below(b, 6)]); break;
            case 2: tg_byte(b, 0); break;
            case 3: tg_range(b, 0x80, 0x7FF); break;
            default: tg_str(b, TG_PICK(b, tg_phrases)); break;
            }
            if (tg_below(b, 2)) tg_byte(b, ' ');
        }
        break;
    }
    }
}

/* About `target` bytes of lines; returns a malloc'ed buffer (NUL-terminated,
 * though it contains NULs), its length in *len. */
static char *textgen(uint64_t seed, size_t target, size_t *len) {
    tg_buf b = {0};
    b.rng = seed;
    while (b.n < target) {
        unsigned r = tg_below(&b, 100);
        if (r < 4) { /* empty line */ }
        else if (r < 6) { /* long line */
            size_t end = b.n + 4000 + tg_below(&b, 16000);
            while (b.n < end) { tg_segment(&b, tg_below(&b, 9)); tg_byte(&b, ' '); }
        } else if (r < 40) {
            unsigned n = 2 + tg_below(&b, 4);
            for (unsigned i = 0; i < n; i++) { tg_segment(&b, tg_below(&b, 9)); if (tg_below(&b, 2)) tg_byte(&b, ' '); }
        } else {
            tg_segment(&b, tg_below(&b, 9));
        }
        tg_byte(&b, '\n');
    }
    b.p[b.n] = 0;
    *len = b.n;
    return b.p;
}

#endif
