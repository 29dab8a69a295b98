#include "plots/gp.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/inputs.h"
#include "base/text.h"

/* ---------- text ---------- */

/* Length of the valid UTF-8 sequence at s (n bytes left) and its code point;
 * 0 if the bytes there are not one (overlong, surrogate, out of range, cut). */
static int utf8_seq(const unsigned char *s, size_t n, unsigned *cp) {
    unsigned c = s[0];
    int len;
    unsigned min;
    if (c < 0x80) { *cp = c; return 1; }
    if (c >= 0xc2 && c <= 0xdf) { len = 2; *cp = c & 0x1f; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { len = 3; *cp = c & 0x0f; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { len = 4; *cp = c & 0x07; min = 0x10000; }
    else return 0;
    if ((size_t)len > n) return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        *cp = (*cp << 6) | (s[i] & 0x3f);
    }
    if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff)) return 0;
    return len;
}

/* code points that would be invisible or rearrange the text around them */
static int hidden_cp(unsigned cp) {
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029 || cp == 0xfeff;
}

char *gp_text_visible(char *out, size_t size, const char *in, size_t len, size_t max_chars) {
    static const char ellipsis[] = "...";
    size_t o = 0, chars = 0;
    if (size == 0) return out;
    out[0] = 0;
    if (!in) return out;
    if (len == (size_t)-1) len = strlen(in);
    const unsigned char *s = (const unsigned char *)in;
    size_t i = 0;
    while (i < len) {
        char piece[16];
        size_t plen;
        unsigned cp;
        int sl = utf8_seq(s + i, len - i, &cp);
        if (sl == 0) {
            plen = (size_t)snprintf(piece, sizeof piece, "\\x%02x", s[i]);
            sl = 1;
        } else if (cp == '\n') {
            plen = (size_t)snprintf(piece, sizeof piece, "\\n");
        } else if (cp == '\t') {
            plen = (size_t)snprintf(piece, sizeof piece, "\\t");
        } else if (cp == '\r') {
            plen = (size_t)snprintf(piece, sizeof piece, "\\r");
        } else if (cp < 0x20 || cp == 0x7f) {
            plen = (size_t)snprintf(piece, sizeof piece, "\\x%02x", cp);
        } else if (hidden_cp(cp)) {
            plen = (size_t)snprintf(piece, sizeof piece, "\\u{%04x}", cp);
        } else {
            memcpy(piece, s + i, (size_t)sl);
            plen = (size_t)sl;
        }
        /* room for this piece and, if more follows, for the ellipsis */
        int last = i + (size_t)sl >= len;
        if ((max_chars && chars >= max_chars) || o + plen + (last ? 0 : sizeof ellipsis - 1) + 1 > size) {
            size_t keep = o;
            while (keep > 0 && keep + sizeof ellipsis > size) { /* back off whole characters */
                keep--;
                while (keep > 0 && ((unsigned char)out[keep] & 0xc0) == 0x80) keep--;
            }
            memcpy(out + keep, ellipsis, sizeof ellipsis);
            return out;
        }
        memcpy(out + o, piece, plen);
        o += plen;
        out[o] = 0;
        chars++;
        i += (size_t)sl;
    }
    return out;
}

char *gp_token_visible(char *out, size_t size, const char *piece, size_t max_chars) {
    static const struct { const char *from, *to; } marks[] = {
        {"<0x0A>", "\u21b5"}, {"<0x09>", "\u21e5"}, {"<0x20>", "\u2423"}, {"<0x0D>", "\u240d"},
        {"\u2581", "\u2423"}, {" ", "\u2423"}, {"\n", "\u21b5"}, {"\t", "\u21e5"}};
    char mapped[1024];
    size_t o = 0;
    for (const char *p = piece ? piece : ""; *p && o + 8 < sizeof mapped;) {
        size_t k = 0;
        while (k < sizeof marks / sizeof *marks && strncmp(p, marks[k].from, strlen(marks[k].from))) k++;
        if (k < sizeof marks / sizeof *marks) {
            o += (size_t)snprintf(mapped + o, sizeof mapped - o, "%s", marks[k].to);
            p += strlen(marks[k].from);
        } else mapped[o++] = *p++;
    }
    mapped[o] = 0;
    return gp_text_visible(out, size, mapped, (size_t)-1, max_chars);
}

char *gp_model_name(char *out, size_t size, const char *model_path) {
    char name[4096];
    return gp_text_visible(out, size, gs_model_name(model_path, name, sizeof name), (size_t)-1, 60);
}

char *gp_quote(char *out, size_t size, const char *text, unsigned flags) {
    size_t o = 0;
    if (size < 3) { if (size) out[0] = 0; return out; }
    out[o++] = '\'';
    for (const char *p = text ? text : ""; *p; p++) {
        int dbl = *p == '\'' || (*p == '%' && (flags & GP_Q_PERCENT));
        if (o + (dbl ? 2 : 1) + 2 > size) break;
        /* never cut a UTF-8 sequence: drop its start if the rest would not fit */
        out[o++] = *p;
        if (dbl) out[o++] = *p;
    }
    while (o > 1 && ((unsigned char)out[o - 1] & 0x80)) { /* an incomplete trailing sequence */
        size_t k = o - 1;
        while (k > 1 && ((unsigned char)out[k] & 0xc0) == 0x80) k--;
        unsigned cp;
        if (utf8_seq((const unsigned char *)out + k, o - k, &cp) == (int)(o - k)) break;
        o = k;
    }
    out[o++] = '\'';
    out[o] = 0;
    return out;
}

/* ---------- files ---------- */

int gp_file_open(gp_file *a, const char *dir, const char *name) {
    memset(a, 0, sizeof *a);
    if ((size_t)snprintf(a->final, sizeof a->final, "%s/%s", dir, name) >= sizeof a->final ||
        (size_t)snprintf(a->tmp, sizeof a->tmp, "%s/.%s.tmp.%ld", dir, name, (long)getpid()) >= sizeof a->tmp)
        return gs_fail("%s/%s: path too long", dir, name);
    if (gs_output_check(a->final)) return -1;
    a->f = fopen(a->tmp, "w");
    if (!a->f) return gs_fail("%s: cannot write: %s", a->tmp, strerror(errno));
    return 0;
}

int gp_file_commit(gp_file *a) {
    if (!a->f) return gs_fail("%s: not open", a->final);
    int bad = ferror(a->f);
    int err = bad ? EIO : 0;
    if (fflush(a->f) != 0 && !bad) { bad = 1; err = errno; }
    if (fclose(a->f) != 0 && !bad) { bad = 1; err = errno; }
    a->f = NULL;
    if (bad) {
        unlink(a->tmp);
        return gs_fail("%s: writing failed: %s (is the disk full?)", a->final, strerror(err));
    }
    if (gs_output_check(a->final)) {
        unlink(a->tmp);
        return -1;
    }
    if (rename(a->tmp, a->final) != 0) {
        err = errno;
        unlink(a->tmp);
        return gs_fail("%s: cannot rename into place: %s", a->final, strerror(err));
    }
    return 0;
}

void gp_file_abort(gp_file *a) {
    if (!a) return;
    if (a->f) {
        fclose(a->f);
        a->f = NULL;
        unlink(a->tmp);
    }
}

/* ---------- scripts ---------- */

void gp_preamble(FILE *f, const plot_ctx *c, const char *name, const char *what, const char *data_files) {
    char q[1024];
    fprintf(f,
            "# %s.gp: %s\n"
            "# %s, from %s (gpnscope plot). Standalone and editable; from this folder:\n"
            "#   gnuplot %s.gp                     renders %s.%s\n"
            "#   gnuplot -e \"fmt='svg'\" %s.gp      svg (or 'pdf', 'png') instead\n"
            "#   gnuplot -e \"out='x.png'\" %s.gp    another output file\n"
            "# Data: %s (plain columns; the # lines name them).\n\n",
            name, what, c->run_label, c->store_name, name, name, c->first_fmt, name, name, data_files);
    fprintf(f, "if (!exists(\"fmt\")) fmt = '%s'\n", c->first_fmt);
    fprintf(f, "if (!exists(\"out\")) out = '%s.' . fmt\n", name);
    fprintf(f, "W = %d; H = %d    # pixels (pdf: W/150 x H/150 inches, drawn to look like the png)\n", c->o->width, c->o->height);
    fprintf(f, "FONT = 'Sans,%d'\n", c->font);
    fprintf(f, "TITLE_FONT = 'Sans,%d'\n", c->font + 2);
    fprintf(f,
            "set encoding utf8\n"
            "# svg sizes fonts in pixels, cairo in points (fontscale 1.333); pdf pages are drawn smaller with\n"
            "# thinner lines and points, so that all three look alike\n"
            "if (fmt eq 'png') { set terminal pngcairo size W,H font FONT noenhanced }\n"
            "if (fmt eq 'svg') { set terminal svg size W,H font FONT fontscale 1.333 noenhanced background '#ffffff' }\n"
            "if (fmt eq 'pdf') { set terminal pdfcairo size W/150.0,H/150.0 font FONT linewidth 0.75 pointscale 0.6 noenhanced }\n"
            "if (fmt ne 'png' && fmt ne 'svg' && fmt ne 'pdf') { print \"fmt must be 'png', 'svg' or 'pdf'\"; "
            "exit status 1 }\n"
            "# text is printed as written: no enhanced-text markup (tokens contain @ ^ _ { })\n"
            "set termoption noenhanced\n"
            "set output out\n"
            "set datafile missing 'NaN'\n"
            "# Okabe-Ito colours, told apart with colour-blindness too\n"
            "C_BLUE = '#0072B2'; C_ORANGE = '#E69F00'; C_VERMILION = '#D55E00'; C_GREEN = '#009E73'\n"
            "C_SKY = '#56B4E9'; C_PURPLE = '#CC79A7'; C_GREY = '#666666'\n"
            "set grid lc rgb '#d8d8d8' lw 1\n"
            "set key box lc rgb '#aaaaaa' opaque samplen 2.5 spacing 1.1\n"
            "set border lw 1.2\n"
            "set tics nomirror\n");
    fprintf(f, "RUN = %s\n\n", gp_quote(q, sizeof q, c->run_label, 0));
}

void gp_panel(FILE *f, const char *comment, double ox, double oy, double sx, double sy) {
    fprintf(f,
            "\n# %s\n"
            "unset logscale; unset arrow; unset label; unset colorbox; set size noratio; set bmargin\n"
            "set key inside top right Right noreverse\n"
            "set xtics autofreq; set ytics autofreq; set tics scale default; set grid xtics ytics\n"
            "set style fill empty\n"
            "set origin %g, %g; set size %g, %g\n",
            comment, ox, oy, sx, sy);
}

void gp_key_below(FILE *f, double ox, int rows) {
    fprintf(f,
            "# the key sits under the x label, in a bottom margin kept free for it\n"
            "set bmargin %.1f\n"
            "set key at screen %g, screen 0.012 left bottom Left reverse\n",
            4.2 + 1.25 * rows, ox + 0.012);
}

void gp_log_tics(FILE *f, const char *axis, double lo, double hi) {
    if (!(lo > 0) || !(hi > lo)) return;
    const int dense = hi / lo < 1000;
    char list[1024] = "";
    size_t len = 0;
    for (double dec = pow(10, floor(log10(lo))); dec <= hi * 1.0001 && len + 32 < sizeof list; dec *= 10) {
        static const double steps[3] = {1, 2, 5};
        for (int i = 0; i < (dense ? 3 : 1); i++) {
            double v = dec * steps[i];
            if (v < lo * 0.9999 || v > hi * 1.0001) continue;
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%g", len ? ", " : "", v);
        }
    }
    if (len) fprintf(f, "set %stics (%s)\n", axis, list);
    else fprintf(f, "set %stics autofreq\n", axis);
}

double gp_nice_step(double lo, double hi, int max_tics) {
    double span = hi - lo;
    if (!(span > 0) || max_tics < 1) return 1;
    double raw = span / max_tics, p = pow(10, floor(log10(raw)));
    static const double m[4] = {1, 2, 5, 10};
    for (int i = 0; i < 4; i++) if (m[i] * p >= raw) return m[i] * p;
    return 10 * p;
}

void gp_empty_panel(FILE *f, const char *title, const char *message) {
    char q1[512], q2[512];
    fprintf(f,
            "set title %s\n"
            "unset xlabel; unset ylabel; unset key; unset tics; unset grid; unset colorbox\n"
            "set xrange [0:1]; set yrange [0:1]\n"
            "set border 0\n"
            "set label 1 %s at graph 0.5, graph 0.5 center tc rgb C_GREY\n"
            "plot -1 notitle\n"
            "unset label 1\n"
            "set border lw 1.2; set xtics; set ytics; set tics nomirror; set grid\n",
            gp_quote(q1, sizeof q1, title, 0), gp_quote(q2, sizeof q2, message, 0));
}

void gp_epilogue(FILE *f) { fprintf(f, "set output\n"); }

int gp_write_columns(const plot_ctx *c, const char *file, const char *header, const char *colnames, int ncol,
                     int64_t n, const double *const *cols) {
    gp_file a;
    if (gp_file_open(&a, c->dir, file) != 0) return -1;
    fprintf(a.f, "# %s\n# %s, %s\n# %s\n", header, c->run_label, c->store_name, colnames);
    for (int64_t i = 0; i < n; i++) {
        for (int j = 0; j < ncol; j++) {
            double v = cols[j][i];
            if (isfinite(v)) fprintf(a.f, j ? " %.17g" : "%.17g", v);
            else fprintf(a.f, j ? " NaN" : "NaN");
        }
        fputc('\n', a.f);
    }
    return gp_file_commit(&a);
}

int gp_minmax(const double *v, int64_t n, double *lo, double *hi) {
    int any = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(v[i])) continue;
        if (!any || v[i] < *lo) *lo = v[i];
        if (!any || v[i] > *hi) *hi = v[i];
        any = 1;
    }
    return any;
}

void gp_pad(double *lo, double *hi, int logscale) {
    if (logscale) {
        if (!(*lo > 0)) *lo = 1e-3;
        if (!(*hi > *lo)) *hi = *lo * 10;
        double r = log10(*hi / *lo);
        *lo /= pow(10, 0.04 * r + 0.02);
        *hi *= pow(10, 0.04 * r + 0.02);
        return;
    }
    double span = *hi - *lo;
    if (!(span > 1e-12 * (fabs(*lo) + fabs(*hi)) && span > 0)) {
        double m = fabs(*lo) > 0 ? 0.1 * fabs(*lo) : 0.5;
        *lo -= m;
        *hi += m;
        return;
    }
    *lo -= 0.05 * span;
    *hi += 0.05 * span;
}

const char *gp_tokens(char *buf, size_t size, double v) {
    if (!isfinite(v)) return gp_num(buf, size, v);
    if (fabs(v) >= 100) snprintf(buf, size, "%.0f", v);
    else snprintf(buf, size, "%.3g", v);
    return buf;
}

const char *gp_num(char *buf, size_t size, double v) {
    if (isnan(v)) snprintf(buf, size, "n/a");
    else if (isinf(v)) snprintf(buf, size, v > 0 ? "inf" : "-inf");
    else snprintf(buf, size, "%.4g", v);
    return buf;
}

/* ---------- reading ---------- */

int64_t gp_series(store *st, int64_t aid, const char *name, double **x, double **y) {
    *x = *y = NULL;
    if (aid <= 0) return 0;
    int64_t n = store_analysis_get_series(st, aid, name, x, y);
    if (n <= 0) { free(*x); free(*y); *x = *y = NULL; }
    return n;
}

int64_t gp_series_labels(store *st, int64_t aid, const char *name, char ***labels) {
    return store_analysis_get_labels(st, aid, name, labels);
}

void gp_free_labels(char **labels, int64_t n) { store_free_labels(labels, n); }

double gp_scalar(store *st, int64_t aid, const char *key) {
    double v = NAN;
    if (aid <= 0 || store_analysis_get_scalar(st, aid, key, &v) != 0) {
        gs_clear_error();
        return NAN;
    }
    return v;
}

char *gp_scalar_note(store *st, int64_t aid, const char *key, char *buf, size_t size) {
    if (store_analysis_get_note(st, aid, key, buf, size) < 0) gs_clear_error(); /* no note: "" */
    return buf;
}

int64_t gp_vector(store *st, int64_t aid, const char *key, double **v) {
    *v = NULL;
    float *f = NULL;
    if (aid <= 0) return 0;
    int64_t n = store_analysis_get_vector(st, aid, key, &f);
    if (n <= 0) { free(f); gs_clear_error(); return 0; }
    *v = malloc((size_t)n * sizeof **v);
    if (!*v) { free(f); return gs_fail("out of memory reading '%s'", key); }
    for (int64_t i = 0; i < n; i++) (*v)[i] = f[i];
    free(f);
    return n;
}

int64_t gp_analysis(store *st, int64_t run, unsigned analysis) {
    int64_t id = store_analysis_find(st, run, gs_analysis_stored_name(analysis), NULL);
    if (id < 0) { gs_clear_error(); return 0; }
    return id;
}
