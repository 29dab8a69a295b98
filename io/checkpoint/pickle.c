/* The pickle virtual machine: one loop over the opcodes, an explicit value
 * stack and mark stack, a hash-table memo. No recursion: nothing hostile
 * input nests can deepen the C stack. See pickle.h for the contract. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/checkpoint/pickle_impl.h"

#define BLOCK_VALUES 256
struct pk_block {
    pk_block *next;
    size_t used;
    pk_value v[BLOCK_VALUES];
};

void pk_default_limits(pk_limits *lim) {
    lim->max_values = 1ull << 24;
    lim->max_bytes = 1ull << 38;
    lim->max_depth = 128;
    lim->max_memo = 1u << 22;
    lim->max_stack = 1u << 22;
}

static const char *op_name(unsigned char op) {
    switch (op) {
    case '(': return "MARK"; case '.': return "STOP"; case '0': return "POP"; case '1': return "POP_MARK";
    case '2': return "DUP"; case 'F': return "FLOAT"; case 'I': return "INT"; case 'J': return "BININT";
    case 'K': return "BININT1"; case 'L': return "LONG"; case 'M': return "BININT2"; case 'N': return "NONE";
    case 'P': return "PERSID"; case 'Q': return "BINPERSID"; case 'R': return "REDUCE"; case 'S': return "STRING";
    case 'T': return "BINSTRING"; case 'U': return "SHORT_BINSTRING"; case 'V': return "UNICODE";
    case 'X': return "BINUNICODE"; case 'a': return "APPEND"; case 'b': return "BUILD"; case 'c': return "GLOBAL";
    case 'd': return "DICT"; case '}': return "EMPTY_DICT"; case 'e': return "APPENDS"; case 'g': return "GET";
    case 'h': return "BINGET"; case 'i': return "INST"; case 'j': return "LONG_BINGET"; case 'l': return "LIST";
    case ']': return "EMPTY_LIST"; case 'o': return "OBJ"; case 'p': return "PUT"; case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT"; case 's': return "SETITEM"; case 't': return "TUPLE"; case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS"; case 'G': return "BINFLOAT"; case 'B': return "BINBYTES"; case 'C': return "SHORT_BINBYTES";
    case 0x80: return "PROTO"; case 0x81: return "NEWOBJ"; case 0x82: return "EXT1"; case 0x83: return "EXT2";
    case 0x84: return "EXT4"; case 0x85: return "TUPLE1"; case 0x86: return "TUPLE2"; case 0x87: return "TUPLE3";
    case 0x88: return "NEWTRUE"; case 0x89: return "NEWFALSE"; case 0x8a: return "LONG1"; case 0x8b: return "LONG4";
    case 0x8c: return "SHORT_BINUNICODE"; case 0x8d: return "BINUNICODE8"; case 0x8e: return "BINBYTES8";
    case 0x8f: return "EMPTY_SET"; case 0x90: return "ADDITEMS"; case 0x91: return "FROZENSET"; case 0x92: return "NEWOBJ_EX";
    case 0x93: return "STACK_GLOBAL"; case 0x94: return "MEMOIZE"; case 0x95: return "FRAME"; case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER"; case 0x98: return "READONLY_BUFFER";
    default: return NULL;
    }
}

int pk_fail(pk_doc *d, const char *fmt, ...) {
    char msg[GS_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *name = op_name(d->op);
    return gs_fail("pickle byte %zu (%s): %s", d->op_pos, name ? name : "?", msg);
}

pk_value *pk_new(pk_doc *d, pk_kind kind) {
    if (!d->blocks || d->blocks->used == BLOCK_VALUES) {
        pk_block *b = malloc(sizeof *b);
        if (!b) { pk_fail(d, "out of memory"); return NULL; }
        b->next = d->blocks;
        b->used = 0;
        d->blocks = b;
    }
    pk_value *v = &d->blocks->v[d->blocks->used++];
    memset(v, 0, sizeof *v);
    v->kind = kind;
    v->depth = 1;
    v->weight = 1;
    return v;
}

void *pk_buf(pk_doc *d, size_t n) {
    if (d->nbufs == d->bcap) {
        size_t cap = d->bcap ? 2 * d->bcap : 64;
        void **b = realloc(d->bufs, cap * sizeof *b);
        if (!b) { pk_fail(d, "out of memory"); return NULL; }
        d->bufs = b;
        d->bcap = cap;
    }
    void *p = malloc(n ? n : 1);
    if (!p) { pk_fail(d, "out of memory (%zu bytes)", n); return NULL; }
    d->bufs[d->nbufs++] = p;
    return p;
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

int pk_adopt(pk_doc *d, pk_value *parent, pk_value *child) {
    if (child == parent) return pk_fail(d, "a %s would contain itself (cycles are refused)", pk_kind_name(parent));
    child->sealed = 1;
    parent->weight = sat_add(parent->weight, child->weight);
    parent->wbytes = sat_add(parent->wbytes, child->wbytes);
    if (child->depth + 1 > parent->depth) parent->depth = child->depth + 1;
    if (parent->depth > d->lim.max_depth) return pk_fail(d, "values nested deeper than %" PRIu32 " levels", d->lim.max_depth);
    if (parent->weight > d->lim.max_values)
        return pk_fail(d, "the pickle expands to more than %" PRIu64 " values (a value shared through the memo counts each time it is used)",
                       d->lim.max_values);
    if (parent->wbytes > d->lim.max_bytes)
        return pk_fail(d, "the pickle expands to more than %" PRIu64 " bytes of strings (a value shared through the memo counts each time it is used)",
                       d->lim.max_bytes);
    return 0;
}

static int seq_push(pk_doc *d, pk_value *c, pk_value *item) {
    if (c->u.seq.n == c->u.seq.cap) {
        size_t cap = c->u.seq.cap ? 2 * c->u.seq.cap : 4;
        pk_value **v = realloc(c->u.seq.v, cap * sizeof *v);
        if (!v) return pk_fail(d, "out of memory");
        c->u.seq.v = v;
        c->u.seq.cap = cap;
    }
    c->u.seq.v[c->u.seq.n++] = item;
    return pk_adopt(d, c, item);
}

int pk_adopt_item(pk_doc *d, pk_value *container, pk_value *item) { return seq_push(d, container, item); }

/* ---- stack, marks, memo ---- */

static int push(pk_doc *d, pk_value *v) {
    if (!v) return -1;
    if (d->sp + d->nmarks >= d->lim.max_stack) return pk_fail(d, "more than %" PRIu32 " values and marks on the stack", d->lim.max_stack);
    if (d->sp == d->scap) {
        size_t cap = d->scap ? 2 * d->scap : 64;
        pk_value **s = realloc(d->stack, cap * sizeof *s);
        if (!s) return pk_fail(d, "out of memory");
        d->stack = s;
        d->scap = cap;
    }
    d->stack[d->sp++] = v;
    return 0;
}

/* The stack index where the innermost open mark's values begin. */
static size_t frame_base(const pk_doc *d) { return d->nmarks ? d->marks[d->nmarks - 1] : 0; }

static pk_value *pop(pk_doc *d) {
    if (d->sp == frame_base(d)) { pk_fail(d, "stack underflow"); return NULL; }
    return d->stack[--d->sp];
}

static pk_value *top(pk_doc *d) {
    if (d->sp == frame_base(d)) { pk_fail(d, "stack underflow"); return NULL; }
    return d->stack[d->sp - 1];
}

static int push_mark(pk_doc *d) {
    if (d->sp + d->nmarks >= d->lim.max_stack) return pk_fail(d, "more than %" PRIu32 " values and marks on the stack", d->lim.max_stack);
    if (d->nmarks == d->mcap) {
        size_t cap = d->mcap ? 2 * d->mcap : 16;
        size_t *m = realloc(d->marks, cap * sizeof *m);
        if (!m) return pk_fail(d, "out of memory");
        d->marks = m;
        d->mcap = cap;
    }
    d->marks[d->nmarks++] = d->sp;
    return 0;
}

/* Close the innermost mark: its values are stack[*base .. sp). */
static int pop_mark(pk_doc *d, size_t *base) {
    if (!d->nmarks) return pk_fail(d, "no MARK to close");
    *base = d->marks[--d->nmarks];
    return 0;
}

static size_t memo_slot(const pk_doc *d, uint32_t key) {
    size_t h = (size_t)(key * 2654435761u) & (d->memo_cap - 1);
    while (d->memo_vals[h] && d->memo_keys[h] != key) h = (h + 1) & (d->memo_cap - 1);
    return h;
}

static int memo_put(pk_doc *d, uint64_t key, pk_value *v) {
    /* picklers number memo entries from 0, one per PUT of at least two bytes */
    if (key > UINT32_MAX || key >= d->n)
        return pk_fail(d, "memo index %" PRIu64 " is beyond what a %zu-byte pickle can hold", key, d->n);
    if (d->memo_cap) {
        size_t h = memo_slot(d, (uint32_t)key);
        if (d->memo_vals[h]) { d->memo_vals[h] = v; return 0; }
    }
    if (d->memo_count >= d->lim.max_memo) return pk_fail(d, "more than %" PRIu32 " memo entries", d->lim.max_memo);
    if (2 * (d->memo_count + 1) > d->memo_cap) {
        size_t cap = d->memo_cap ? 2 * d->memo_cap : 64;
        uint32_t *k = calloc(cap, sizeof *k);
        pk_value **vals = calloc(cap, sizeof *vals);
        if (!k || !vals) { free(k); free(vals); return pk_fail(d, "out of memory"); }
        uint32_t *ok = d->memo_keys;
        pk_value **ov = d->memo_vals;
        size_t ocap = d->memo_cap;
        d->memo_keys = k;
        d->memo_vals = vals;
        d->memo_cap = cap;
        for (size_t i = 0; i < ocap; i++)
            if (ov[i]) { size_t h = memo_slot(d, ok[i]); d->memo_keys[h] = ok[i]; d->memo_vals[h] = ov[i]; }
        free(ok);
        free(ov);
    }
    size_t h = memo_slot(d, (uint32_t)key);
    d->memo_keys[h] = (uint32_t)key;
    d->memo_vals[h] = v;
    d->memo_count++;
    return 0;
}

static int memo_get(pk_doc *d, uint64_t key) {
    if (key > UINT32_MAX || !d->memo_cap || !d->memo_vals[memo_slot(d, (uint32_t)key)])
        return pk_fail(d, "memo entry %" PRIu64 " was never stored", key);
    return push(d, d->memo_vals[memo_slot(d, (uint32_t)key)]);
}

/* ---- reading the input ---- */

static int need(pk_doc *d, uint64_t k, const char *what) {
    if (k > d->n - d->pos)
        return pk_fail(d, "%s of %" PRIu64 " bytes, but only %zu bytes remain (truncated or hostile)", what, k, d->n - d->pos);
    return 0;
}

static uint64_t le(const unsigned char *p, int k) {
    uint64_t v = 0;
    for (int i = k - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* Read k little-endian bytes as an unsigned integer. */
static int read_uint(pk_doc *d, int k, uint64_t *out) {
    if (need(d, (uint64_t)k, "argument") != 0) return -1;
    *out = le(d->p + d->pos, k);
    d->pos += (size_t)k;
    return 0;
}

/* A text line (protocol 0): [*s, *s + *len), the newline consumed. */
static int read_line(pk_doc *d, const char **s, size_t *len) {
    const unsigned char *nl = memchr(d->p + d->pos, '\n', d->n - d->pos);
    if (!nl) return pk_fail(d, "truncated: the text argument has no end of line");
    *s = (const char *)d->p + d->pos;
    *len = (size_t)(nl - (d->p + d->pos));
    d->pos += *len + 1;
    return 0;
}

static pk_value *new_int(pk_doc *d, int64_t v, int big) {
    pk_value *x = pk_new(d, PK_INT);
    if (x) { x->u.i = v; x->big = (unsigned)big; }
    return x;
}

/* Two's complement little-endian of n bytes (LONG1, LONG4). */
static pk_value *new_long(pk_doc *d, const unsigned char *p, uint64_t n) {
    if (n == 0) return new_int(d, 0, 0);
    int neg = p[n - 1] & 0x80;
    int big = 0;
    for (uint64_t i = 8; i < n; i++)
        if (p[i] != (neg ? 0xff : 0)) { big = 1; break; }
    if (!big && n > 8 && ((p[7] & 0x80) != 0) != (neg != 0)) big = 1;
    uint64_t u = 0;
    int k = n < 8 ? (int)n : 8;
    for (int i = k - 1; i >= 0; i--) u = u << 8 | p[i];
    if (neg && k < 8) u |= ~0ull << (8 * k);
    return new_int(d, big ? 0 : (int64_t)u, big);
}

pk_value *pk_new_bytes(pk_doc *d, pk_kind kind, const unsigned char *p, size_t n) {
    if (kind == PK_STR && !pk_utf8_ok(p, n)) { pk_fail(d, "string of %zu bytes is not valid UTF-8", n); return NULL; }
    pk_value *v = pk_new(d, kind);
    if (!v) return NULL;
    v->u.s.p = p;
    v->u.s.n = n;
    v->wbytes = n;
    return v;
}

/* A length-prefixed string: k bytes of length, then the data. */
static pk_value *counted(pk_doc *d, int k, pk_kind kind, int is_signed) {
    uint64_t len;
    if (read_uint(d, k, &len) != 0) return NULL;
    if (is_signed && k == 4 && (len & 0x80000000u)) { pk_fail(d, "negative length"); return NULL; }
    if (need(d, len, op_name(d->op)) != 0) return NULL;
    const unsigned char *p = d->p + d->pos;
    d->pos += (size_t)len;
    return pk_new_bytes(d, kind, p, (size_t)len);
}

/* ---- containers ---- */

static int hashable(const pk_value *k) { return k->kind != PK_LIST && k->kind != PK_DICT && !(k->kind == PK_SET && !k->frozen); }

static int check_mutable(pk_doc *d, const pk_value *target, pk_kind want) {
    if (target->kind != want) return pk_fail(d, "expected a %s below, found a %s", want == PK_LIST ? "list" : want == PK_DICT ? "dict" : "set",
                                              pk_kind_name(target));
    if (target->sealed)
        return pk_fail(d, "changes a %s that is already inside another value (a cycle, or a hostile pickle)", pk_kind_name(target));
    return 0;
}

static int set_items(pk_doc *d, pk_value *dict, pk_value **kv, size_t n) {
    if (n % 2) return pk_fail(d, "an odd number of values (%zu) for key/value pairs", n);
    for (size_t i = 0; i < n; i += 2) {
        if (!hashable(kv[i])) return pk_fail(d, "a %s as a dict key (unhashable)", pk_kind_name(kv[i]));
        if (seq_push(d, dict, kv[i]) != 0 || seq_push(d, dict, kv[i + 1]) != 0) return -1;
    }
    return 0;
}

static int append_items(pk_doc *d, pk_value *c, pk_value **v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (c->kind == PK_SET && !hashable(v[i])) return pk_fail(d, "a %s in a set (unhashable)", pk_kind_name(v[i]));
        if (seq_push(d, c, v[i]) != 0) return -1;
    }
    return 0;
}

/* A new container of kind from the values above the innermost mark. */
static int from_mark(pk_doc *d, pk_kind kind) {
    size_t base = 0;
    if (pop_mark(d, &base) != 0) return -1;
    pk_value *c = pk_new(d, kind);
    if (!c) return -1;
    c->frozen = d->op == 0x91; /* FROZENSET */
    int rc = kind == PK_DICT ? set_items(d, c, d->stack + base, d->sp - base) : append_items(d, c, d->stack + base, d->sp - base);
    d->sp = base;
    return rc != 0 ? -1 : push(d, c);
}

static int tuple_n(pk_doc *d, size_t k) {
    if (d->sp - frame_base(d) < k) return pk_fail(d, "stack underflow");
    pk_value *t = pk_new(d, PK_TUPLE);
    if (!t) return -1;
    for (size_t i = d->sp - k; i < d->sp; i++)
        if (seq_push(d, t, d->stack[i]) != 0) return -1;
    d->sp -= k;
    return push(d, t);
}

/* ---- the loop ---- */

static int step(pk_doc *d, int *stop) {
    d->op_pos = d->pos;
    d->op = d->p[d->pos++];
    uint64_t u;
    const char *s = NULL, *s2 = NULL;
    size_t len = 0, len2 = 0;
    int64_t iv;
    int big;
    pk_value *a, *b, *c;
    size_t base = 0;
    switch (d->op) {
    case 0x80: /* PROTO */
        if (read_uint(d, 1, &u) != 0) return -1;
        if (u > 5) return pk_fail(d, "protocol %" PRIu64 " is newer than 5", u);
        return 0;
    case 0x95: /* FRAME: framing only groups opcodes; the length must fit */
        if (read_uint(d, 8, &u) != 0) return -1;
        return need(d, u, "a frame");
    case '.':
        if (d->nmarks) return pk_fail(d, "STOP inside an open MARK");
        if (d->sp != 1) return pk_fail(d, "STOP with %zu values on the stack (expected 1)", d->sp);
        if (d->pos != d->n) return pk_fail(d, "%zu bytes after STOP", d->n - d->pos);
        d->root = d->stack[0];
        d->root->sealed = 1;
        *stop = 1;
        return 0;
    case '(': return push_mark(d);
    case '0': /* POP: a value, or an empty innermost mark (as Python does) */
        if (d->sp == frame_base(d) && d->nmarks) { d->nmarks--; return 0; }
        return pop(d) ? 0 : -1;
    case '1': return pop_mark(d, &base) != 0 ? -1 : (d->sp = base, 0);
    case '2': return (a = top(d)) ? push(d, a) : -1;
    case 'N': return push(d, pk_new(d, PK_NONE));
    case 0x88: case 0x89:
        if (!(a = pk_new(d, PK_BOOL))) return -1;
        a->u.i = d->op == 0x88;
        return push(d, a);
    case 'J':
        if (read_uint(d, 4, &u) != 0) return -1;
        return push(d, new_int(d, (int32_t)(uint32_t)u, 0));
    case 'K': return read_uint(d, 1, &u) != 0 ? -1 : push(d, new_int(d, (int64_t)u, 0));
    case 'M': return read_uint(d, 2, &u) != 0 ? -1 : push(d, new_int(d, (int64_t)u, 0));
    case 0x8a: case 0x8b:
        if (read_uint(d, d->op == 0x8a ? 1 : 4, &u) != 0) return -1;
        if (d->op == 0x8b && (u & 0x80000000u)) return pk_fail(d, "negative length");
        if (need(d, u, "an integer") != 0) return -1;
        a = new_long(d, d->p + d->pos, u);
        d->pos += (size_t)u;
        return push(d, a);
    case 'I':
        if (read_line(d, &s, &len) != 0) return -1;
        if (len == 2 && s[0] == '0' && (s[1] == '0' || s[1] == '1')) { /* protocol 0 booleans */
            if (!(a = pk_new(d, PK_BOOL))) return -1;
            a->u.i = s[1] == '1';
            return push(d, a);
        }
        return pk_parse_decimal(d, s, len, &iv, &big) != 0 ? -1 : push(d, new_int(d, iv, big));
    case 'L':
        if (read_line(d, &s, &len) != 0 || pk_parse_decimal(d, s, len, &iv, &big) != 0) return -1;
        return push(d, new_int(d, iv, big));
    case 'G': {
        if (need(d, 8, "a float") != 0) return -1;
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++) bits = bits << 8 | d->p[d->pos + (size_t)i]; /* big-endian */
        d->pos += 8;
        if (!(a = pk_new(d, PK_FLOAT))) return -1;
        memcpy(&a->u.f, &bits, 8);
        return push(d, a);
    }
    case 'F': {
        if (read_line(d, &s, &len) != 0) return -1;
        char buf[64];
        if (len == 0 || len >= sizeof buf) return pk_fail(d, "not a float");
        memcpy(buf, s, len);
        buf[len] = 0;
        char *end;
        double f = strtod(buf, &end);
        if (*end) return pk_fail(d, "'%s' is not a float", buf);
        if (!(a = pk_new(d, PK_FLOAT))) return -1;
        a->u.f = f;
        return push(d, a);
    }
    case 'X': return push(d, counted(d, 4, PK_STR, 0));
    case 0x8c: return push(d, counted(d, 1, PK_STR, 0));
    case 0x8d: return push(d, counted(d, 8, PK_STR, 0));
    case 'T': return push(d, counted(d, 4, PK_STR, 1));
    case 'U': return push(d, counted(d, 1, PK_STR, 0));
    case 'B': return push(d, counted(d, 4, PK_BYTES, 0));
    case 'C': return push(d, counted(d, 1, PK_BYTES, 0));
    case 0x8e: case 0x96: return push(d, counted(d, 8, PK_BYTES, 0));
    case 'S': return read_line(d, &s, &len) != 0 ? -1 : push(d, pk_text_string(d, s, len));
    case 'V': return read_line(d, &s, &len) != 0 ? -1 : push(d, pk_text_unicode(d, s, len));
    case ']': return push(d, pk_new(d, PK_LIST));
    case '}': return push(d, pk_new(d, PK_DICT));
    case ')': return push(d, pk_new(d, PK_TUPLE));
    case 0x8f: return push(d, pk_new(d, PK_SET));
    case 'l': return from_mark(d, PK_LIST);
    case 't': return from_mark(d, PK_TUPLE);
    case 'd': return from_mark(d, PK_DICT);
    case 0x91: return from_mark(d, PK_SET);
    case 0x85: return tuple_n(d, 1);
    case 0x86: return tuple_n(d, 2);
    case 0x87: return tuple_n(d, 3);
    case 'a':
        if (!(a = pop(d)) || !(b = top(d)) || check_mutable(d, b, PK_LIST) != 0) return -1;
        return seq_push(d, b, a);
    case 'e': case 0x90: case 'u':
        if (pop_mark(d, &base) != 0) return -1;
        if (base == frame_base(d)) return pk_fail(d, "no container below the MARK");
        b = d->stack[base - 1];
        if (check_mutable(d, b, d->op == 'e' ? PK_LIST : d->op == 'u' ? PK_DICT : PK_SET) != 0) return -1;
        if ((d->op == 'u' ? set_items : append_items)(d, b, d->stack + base, d->sp - base) != 0) return -1;
        d->sp = base;
        return 0;
    case 's':
        if (!(a = pop(d)) || !(b = pop(d)) || !(c = top(d)) || check_mutable(d, c, PK_DICT) != 0) return -1;
        {
            pk_value *kv[2] = {b, a};
            return set_items(d, c, kv, 2);
        }
    case 'g': case 'p':
        if (read_line(d, &s, &len) != 0 || pk_parse_decimal(d, s, len, &iv, &big) != 0) return -1;
        if (big || iv < 0) return pk_fail(d, "memo index out of range");
        if (d->op == 'g') return memo_get(d, (uint64_t)iv);
        return (a = top(d)) ? memo_put(d, (uint64_t)iv, a) : -1;
    case 'h': return read_uint(d, 1, &u) != 0 ? -1 : memo_get(d, u);
    case 'j': return read_uint(d, 4, &u) != 0 ? -1 : memo_get(d, u);
    case 'q': case 'r':
        if (read_uint(d, d->op == 'q' ? 1 : 4, &u) != 0) return -1;
        return (a = top(d)) ? memo_put(d, u, a) : -1;
    case 0x94: return (a = top(d)) ? memo_put(d, d->memo_count, a) : -1;
    case 'c':
        if (read_line(d, &s, &len) != 0 || read_line(d, &s2, &len2) != 0) return -1;
        if (pk_resolve_global(d, s, len, s2, len2, &a) != 0) return -1;
        return push(d, a);
    case 0x93:
        if (!(b = pop(d)) || !(a = pop(d))) return -1;
        if (a->kind != PK_STR || b->kind != PK_STR) return pk_fail(d, "module and name must be strings");
        if (pk_resolve_global(d, (const char *)a->u.s.p, a->u.s.n, (const char *)b->u.s.p, b->u.s.n, &c) != 0) return -1;
        return push(d, c);
    case 'R': case 0x81:
        if (!(b = pop(d)) || !(a = pop(d))) return -1;
        if (pk_apply_global(d, a, b, d->op == 0x81, &c) != 0) return -1;
        return push(d, c);
    case 0x92: /* NEWOBJ_EX: cls, args, kwargs; only classes without keyword arguments */
        if (!(c = pop(d)) || !(b = pop(d)) || !(a = pop(d))) return -1;
        if (c->kind != PK_DICT || c->u.seq.n) {
            if (!(a->kind == PK_GLOBAL && a->u.glob.g == PK_G_SKIP))
                return pk_fail(d, "keyword arguments are only accepted for skipped classes");
        }
        if (pk_apply_global(d, a, b, 1, &c) != 0) return -1;
        return push(d, c);
    case 'b':
        if (!(a = pop(d)) || !(b = top(d))) return -1;
        return pk_build(d, b, a);
    case 'Q':
        if (!(a = pop(d)) || !(b = pk_new(d, PK_PERSID))) return -1;
        b->u.pid = a;
        return pk_adopt(d, b, a) != 0 ? -1 : push(d, b);
    case 'P':
        if (read_line(d, &s, &len) != 0) return -1;
        if (!(a = pk_new_bytes(d, PK_STR, (const unsigned char *)s, len)) || !(b = pk_new(d, PK_PERSID))) return -1;
        b->u.pid = a;
        return pk_adopt(d, b, a) != 0 ? -1 : push(d, b);
    case 'i': case 'o': return pk_fail(d, "class instantiation is not supported (refusing to build objects)");
    case 0x82: case 0x83: case 0x84: return pk_fail(d, "the copyreg extension registry is not supported");
    case 0x97: case 0x98: return pk_fail(d, "out-of-band buffers are not supported");
    default:
        return gs_fail("pickle byte %zu: unknown opcode 0x%02x (not a pickle, or a newer protocol)", d->op_pos, d->op);
    }
}

pk_doc *pk_load(const void *data, size_t n, const pk_limits *lim) {
    pk_doc *d = calloc(1, sizeof *d);
    if (!d) { gs_fail("out of memory"); return NULL; }
    d->p = data;
    d->n = n;
    if (lim) d->lim = *lim;
    else pk_default_limits(&d->lim);
    if (d->lim.max_depth > 4096) d->lim.max_depth = 4096; /* consumers recurse up to this depth */
    /* never NULL: stack + base must be a valid pointer even for an empty mark */
    d->scap = 64;
    if (!(d->stack = malloc(d->scap * sizeof *d->stack))) { gs_fail("out of memory"); free(d); return NULL; }
    int stop = 0;
    while (!stop) {
        if (d->pos == d->n) {
            gs_fail("pickle byte %zu: truncated: the pickle ends without STOP", d->n);
            goto fail;
        }
        if (step(d, &stop) != 0) goto fail;
    }
    free(d->stack);
    free(d->marks);
    free(d->memo_keys);
    free(d->memo_vals);
    d->stack = NULL;
    d->marks = NULL;
    d->memo_keys = NULL;
    d->memo_vals = NULL;
    return d;
fail:
    pk_close(d);
    return NULL;
}

static int is_seq(pk_kind k) { return k == PK_LIST || k == PK_TUPLE || k == PK_DICT || k == PK_SET; }

void pk_close(pk_doc *d) {
    if (!d) return;
    for (pk_block *b = d->blocks, *next; b; b = next) {
        next = b->next;
        for (size_t i = 0; i < b->used; i++)
            if (is_seq(b->v[i].kind)) free(b->v[i].u.seq.v);
        free(b);
    }
    for (size_t i = 0; i < d->nbufs; i++) free(d->bufs[i]);
    free(d->bufs);
    free(d->stack);
    free(d->marks);
    free(d->memo_keys);
    free(d->memo_vals);
    free(d);
}

const pk_value *pk_root(const pk_doc *d) { return d->root; }

int pk_str_eq(const pk_value *v, const char *s) {
    size_t n = strlen(s);
    return v && v->kind == PK_STR && v->u.s.n == n && memcmp(v->u.s.p, s, n) == 0;
}

const pk_value *pk_dict_get(const pk_value *d, const char *key) {
    if (!d || d->kind != PK_DICT) return NULL;
    const pk_value *found = NULL;
    for (size_t i = 0; i + 1 < d->u.seq.n; i += 2)
        if (pk_str_eq(d->u.seq.v[i], key)) found = d->u.seq.v[i + 1];
    return found;
}

int pk_int(const pk_value *v, int64_t *out) {
    if (!v || (v->kind != PK_INT && v->kind != PK_BOOL) || v->big) return -1;
    *out = v->u.i;
    return 0;
}

const char *pk_kind_name(const pk_value *v) {
    switch (v->kind) {
    case PK_NONE: return "None";
    case PK_BOOL: return "bool";
    case PK_INT: return "int";
    case PK_FLOAT: return "float";
    case PK_STR: return "str";
    case PK_BYTES: return "bytes";
    case PK_LIST: return "list";
    case PK_TUPLE: return "tuple";
    case PK_DICT: return "dict";
    case PK_SET: return "set";
    case PK_GLOBAL: return "global name";
    case PK_PERSID: return "persistent id";
    case PK_SKIPPED: return "skipped object";
    case PK_OBJECT:
        switch (v->u.obj.g) {
        case PK_G_NP_RECONSTRUCT: case PK_G_NP_FROMBUFFER: return "numpy array";
        case PK_G_NP_DTYPE: return "numpy dtype";
        case PK_G_NP_SCALAR: return "numpy scalar";
        case PK_G_TORCH_REBUILD: return "torch tensor";
        default: return "object";
        }
    }
    return "?";
}
