/* report.md and report.html: the figures with their captions, then the
 * summary table with our numbers (from the store's analysis results) beside
 * the paper's (store/paper_figures.h, shared with analyses/report.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "plots/gp.h"
#include "store/paper_figures.h"
#include "analyses/shared_keys.h"
#include "analyses/state/default_keys.h"
#include "analyses/state/geometry_keys.h"
#include "analyses/state/horizons_keys.h"
#include "analyses/state/probe_keys.h"

#define MAX_ROWS 96

typedef struct {
    int section; /* a heading row */
    char what[96], ours[640], paper[128];
} row;

typedef struct {
    row r[MAX_ROWS];
    int n;
} table;

static row *add(table *t, const char *what, const char *paper) {
    if (t->n >= MAX_ROWS) return &t->r[MAX_ROWS - 1];
    row *r = &t->r[t->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->what, sizeof r->what, "%s", what);
    snprintf(r->paper, sizeof r->paper, "%s", paper);
    return r;
}
static void section(table *t, const char *title) { add(t, title, "")->section = 1; }
/* a row whose label and paper column are the paper's (store/paper_figures.h) */
static row *add_paper(table *t, gs_paper_quantity q) { return add(t, gs_paper(q)->label, gs_paper(q)->paper); }

static const char *num(char *b, double v) { return gp_num(b, 32, v); }

/* the value of series `name` at the x nearest to k on a log scale, among
 * the lags whose pair count (series `name`_pairs, when stored) reaches the
 * analysis' min_pairs: a lag with a handful of pairs is not a mean */
static int nearest(store *st, int64_t aid, const char *name, double k, double *x_out, double *y_out) {
    double *x = NULL, *y = NULL, *px = NULL, *pn = NULL;
    char pname[64];
    snprintf(pname, sizeof pname, "%s_pairs", name);
    int64_t n = gp_series(st, aid, name, &x, &y), np = gp_series(st, aid, pname, &px, &pn);
    double mp = gp_scalar(st, aid, GS_KEY_MIN_PAIRS);
    if (!isfinite(mp)) mp = 100;
    int best = -1;
    double bd = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!(x[i] > 0) || !isfinite(y[i])) continue;
        if (np == n && !(pn[i] >= mp)) continue;
        double d = fabs(log(x[i]) - log(k));
        if (best < 0 || d < bd) { best = (int)i; bd = d; }
    }
    if (best >= 0) { *x_out = x[best]; *y_out = y[best]; }
    free(x); free(y); free(px); free(pn);
    return best >= 0;
}

static void token_list(const plot_ctx *c, int64_t aid, char *out, size_t size) {
    double *x = NULL, *y = NULL;
    char **labels = NULL;
    out[0] = 0;
    int64_t n = gp_series(c->st, aid, GS_KEY_DEFAULT_TOKENS, &x, &y);
    int64_t nl = n > 0 ? gp_series_labels(c->st, aid, GS_KEY_DEFAULT_TOKENS, &labels) : 0;
    if (nl < 0) { gs_clear_error(); nl = 0; }
    for (int64_t i = 0; i < n; i++) {
        char piece[512], vis[256], one[300];
        const char *text = NULL;
        if (isfinite(x[i]) && store_token_piece(c->st, c->run, (int32_t)x[i], piece, sizeof piece) == 0) text = piece;
        else { gs_clear_error(); text = i < nl ? labels[i] : NULL; }
        if (text) snprintf(one, sizeof one, "\"%s\"", gp_token_visible(vis, sizeof vis, text, 24));
        else snprintf(one, sizeof one, "#%.0f", x[i]);
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s", i ? " " : "", one);
    }
    free(x);
    free(y);
    gp_free_labels(labels, nl);
}

static void pool_row(char *out, size_t size, double n, double lo, double hi) {
    char a[32], b[32], d[32];
    if (lo == hi)
        snprintf(out, size, "%s head%s at %s tokens", num(a, n), n == 1 ? "" : "s", num(b, lo));
    else
        snprintf(out, size, "%s head%s at %s-%s tokens", num(a, n), n == 1 ? "" : "s", num(b, lo), num(d, hi));
}

static void summary(const plot_ctx *c, table *t) {
    store *st = c->st;
    char a[32], b[32], d[32];
    int64_t g = gp_analysis(st, c->run, GS_AN_GEOMETRY);
    if (g > 0) {
        section(t, "1. Geometry of the state");
        row *r = add_paper(t, GS_PAPER_STATES);
        snprintf(r->ours, sizeof r->ours, "%s states in %s windows, d = %s", num(a, gp_scalar(st, g, GS_KEY_N_STATES)),
                 num(b, gp_scalar(st, g, GS_KEY_N_WINDOWS)), num(d, gp_scalar(st, g, GS_KEY_D)));
        r = add_paper(t, GS_PAPER_NORM);
        snprintf(r->ours, sizeof r->ours, "%s / %s", num(a, gp_scalar(st, g, GS_KEY_NORM_MEAN)), num(b, gp_scalar(st, g, GS_KEY_NORM_STD)));
        r = add_paper(t, GS_PAPER_DIM_STD);
        snprintf(r->ours, sizeof r->ours, "min %s, max %s", num(a, gp_scalar(st, g, GS_KEY_DIM_STD_MIN)),
                 num(b, gp_scalar(st, g, GS_KEY_DIM_STD_MAX)));
        r = add_paper(t, GS_PAPER_DEAD_DIMS);
        snprintf(r->ours, sizeof r->ours, "%s (std < 1e-3 x median %s)", num(a, gp_scalar(st, g, GS_KEY_DEAD_DIMS)),
                 num(b, gp_scalar(st, g, GS_KEY_MEDIAN_STD)));
        r = add_paper(t, GS_PAPER_CORRELATION);
        snprintf(r->ours, sizeof r->ours, "%s, %s", num(a, gp_scalar(st, g, GS_KEY_CORR_MEAN_ABS)),
                 num(b, gp_scalar(st, g, GS_KEY_CORR_MAX_ABS)));
        double n90 = gp_scalar(st, g, GS_KEY_COMPONENTS_90);
        if (isfinite(n90)) {
            r = add_paper(t, GS_PAPER_PCA);
            snprintf(r->ours, sizeof r->ours, "%s and %s of %s", num(a, n90), num(b, gp_scalar(st, g, GS_KEY_COMPONENTS_99)),
                     num(d, gp_scalar(st, g, GS_KEY_D)));
            r = add_paper(t, GS_PAPER_STABLE_RANK);
            snprintf(r->ours, sizeof r->ours, "%s", num(a, gp_scalar(st, g, GS_KEY_STABLE_RANK)));
        }
        r = add_paper(t, GS_PAPER_PARTICIPATION);
        snprintf(r->ours, sizeof r->ours, "%s", num(a, gp_scalar(st, g, GS_KEY_PARTICIPATION_RATIO)));
    }
    int64_t dd = gp_analysis(st, c->run, GS_AN_DEFAULT);
    if (dd > 0) {
        section(t, "2. The mean direction");
        row *r = add_paper(t, GS_PAPER_MEAN_NORM);
        snprintf(r->ours, sizeof r->ours, "%s (ratio to mean ||s|| %s)", num(a, gp_scalar(st, dd, GS_KEY_MEAN_NORM)),
                 num(b, gp_scalar(st, dd, GS_KEY_NORM_RATIO)));
        r = add_paper(t, GS_PAPER_BATCH_COSINE);
        strncat(r->what, " (8)", sizeof r->what - strlen(r->what) - 1);
        double bm = gp_scalar(st, dd, GS_KEY_BATCH_COS_MEAN);
        if (isfinite(bm)) snprintf(r->ours, sizeof r->ours, "%s +- %s", num(a, bm), num(b, gp_scalar(st, dd, GS_KEY_BATCH_COS_STD)));
        else snprintf(r->ours, sizeof r->ours, "n/a (fewer than 8 states)");
        double br = gp_scalar(st, dd, GS_KEY_BATCH_COS_RANDOM_MEAN);
        if (isfinite(br)) {
            r = add(t, "cross-batch cosine, random rows (8)", "");
            snprintf(r->ours, sizeof r->ours, "%s +- %s", num(a, br), num(b, gp_scalar(st, dd, GS_KEY_BATCH_COS_RANDOM_STD)));
        }
        char toks[2048];
        token_list(c, dd, toks, sizeof toks);
        if (toks[0]) {
            r = add_paper(t, GS_PAPER_DEFAULT_TOKENS);
            snprintf(r->ours, sizeof r->ours, "%s", toks);
        }
        /* like for like: the paper's +0.46 is against its training corpus; the recorded text gets a row of its own */
        double spt = gp_scalar(st, dd, GS_KEY_SPEARMAN_UNIGRAM_TRAIN), sp = gp_scalar(st, dd, GS_KEY_SPEARMAN_UNIGRAM);
        r = add_paper(t, GS_PAPER_SPEARMAN);
        if (isfinite(spt)) snprintf(r->ours, sizeof r->ours, "%+.4f", spt);
        else snprintf(r->ours, sizeof r->ours, "not measured (analyze --train-corpus)");
        if (isfinite(sp)) {
            r = add(t, "Spearman vs recorded-text unigrams", "");
            snprintf(r->ours, sizeof r->ours, "%+.4f", sp);
        }
        double eo = gp_scalar(st, dd, GS_KEY_EMBEDDING_OVERLAP);
        if (isfinite(eo)) {
            r = add_paper(t, GS_PAPER_EMBEDDING_CONTROL);
            snprintf(r->ours, sizeof r->ours, "%s/10 overlap; cosine %+.4f", num(a, eo), gp_scalar(st, dd, GS_KEY_EMBEDDING_COS));
        }
        r = add_paper(t, GS_PAPER_EMERGENCE);
        snprintf(r->ours, sizeof r->ours, "%s at t=10, %s at t=100", num(a, gp_scalar(st, dd, GS_KEY_EMERGENCE_T10)),
                 num(b, gp_scalar(st, dd, GS_KEY_EMERGENCE_T100)));
        r = add_paper(t, GS_PAPER_TOP_PC);
        double tl = gp_scalar(st, dd, GS_KEY_TOP_SV_COS_LO);
        if (isfinite(tl)) /* its window-bootstrap interval */
            snprintf(r->ours, sizeof r->ours, "%s [%s, %s]", num(a, gp_scalar(st, dd, GS_KEY_TOP_SV_COS)), num(b, tl),
                     num(d, gp_scalar(st, dd, GS_KEY_TOP_SV_COS_HI)));
        else snprintf(r->ours, sizeof r->ours, "%s", num(a, gp_scalar(st, dd, GS_KEY_TOP_SV_COS)));
        double pc1 = gp_scalar(st, dd, GS_KEY_PC1_COS);
        if (isfinite(pc1)) {
            r = add(t, "|cos(s_bar, centered PC1)|", "");
            snprintf(r->ours, sizeof r->ours, "%s (||s_bar||^2 / lambda_1 = %s)", num(a, pc1),
                     num(b, gp_scalar(st, dd, GS_KEY_MEAN_NORM2_OVER_LAMBDA1)));
        }
    }
    int64_t h = gp_analysis(st, c->run, GS_AN_HORIZON);
    if (h > 0) {
        section(t, "3. Horizons");
        double k1 = NAN, v1 = NAN, k2 = NAN, v2 = NAN;
        nearest(st, h, GS_KEY_RAW, 1, &k1, &v1);
        nearest(st, h, GS_KEY_RAW, 1500, &k2, &v2);
        row *r = add_paper(t, GS_PAPER_RAW_LAG);
        snprintf(r->ours, sizeof r->ours, "%.4f at k=%s, %.4f at k=%s", v1, num(a, k1), v2, num(b, k2));
        nearest(st, h, GS_KEY_CENTERED, 1, &k1, &v1);
        nearest(st, h, GS_KEY_CENTERED, 256, &k2, &v2);
        r = add_paper(t, GS_PAPER_CENTERED_LAG);
        snprintf(r->ours, sizeof r->ours, "%.4f at k=%s, %.4f at k=%s", v1, num(a, k1), v2, num(b, k2));
        double kr = NAN, vr = NAN, kc = NAN, vc = NAN;
        nearest(st, h, GS_KEY_RAW, 1e9, &kr, &vr);
        nearest(st, h, GS_KEY_CENTERED, 1e9, &kc, &vc);
        double mp = gp_scalar(st, h, GS_KEY_MIN_PAIRS);
        r = add(t, "lags read", "");
        snprintf(r->ours, sizeof r->ours, "raw to k=%s, centered to k=%s (>= %s pairs)", num(a, kr), num(b, kc),
                 num(d, isfinite(mp) ? mp : 100));
        double he = gp_scalar(st, h, GS_KEY_CONTENT_HORIZON_E), h2 = gp_scalar(st, h, GS_KEY_CONTENT_HORIZON_002);
        r = add_paper(t, GS_PAPER_HORIZON_E);
        if (isfinite(he)) snprintf(r->ours, sizeof r->ours, "%s%s", gp_scalar(st, h, GS_KEY_CONTENT_HORIZON_E_CENSORED) > 0 ? ">= " : "", num(a, he));
        else snprintf(r->ours, sizeof r->ours, "undefined (c_1 <= 0)");
        r = add_paper(t, GS_PAPER_HORIZON_002);
        snprintf(r->ours, sizeof r->ours, "%s%s", gp_scalar(st, h, GS_KEY_CONTENT_HORIZON_002_CENSORED) > 0 ? ">= " : "", num(a, h2));
    }
    int64_t rt = gp_analysis(st, c->run, GS_AN_RETENTION);
    if (rt > 0) {
        section(t, "3. Memory horizon (GPN+M)");
        row *r = add_paper(t, GS_PAPER_HEADS);
        snprintf(r->ours, sizeof r->ours, "%s", num(a, gp_scalar(st, rt, "heads")));
        /* the paper's rows hold the paper's estimator (from the start); gpnscope's all-starts one has its own */
        for (int e = 1; e >= 0; e--) {
            const char *sfx = e ? "_from_start" : "", *tag = e ? "" : " (all starts)";
            char k[96], what[96];
#define SC(name) (snprintf(k, sizeof k, "%s%s", name, sfx), gp_scalar(st, rt, k))
            double fn = SC("fast_n");
            if (!isfinite(fn)) continue;
            snprintf(what, sizeof what, "%s%s", gs_paper(GS_PAPER_FAST_POOL)->label, tag);
            r = add(t, what, e ? gs_paper(GS_PAPER_FAST_POOL)->paper : "");
            pool_row(r->ours, sizeof r->ours, fn, SC("fast_min"), SC("fast_max"));
            snprintf(what, sizeof what, "%s%s", gs_paper(GS_PAPER_SLOW_POOL)->label, tag);
            r = add(t, what, e ? gs_paper(GS_PAPER_SLOW_POOL)->paper : "");
            pool_row(r->ours, sizeof r->ours, SC("slow_n"), SC("slow_min"), SC("slow_max"));
            double lr = SC("pool_lr"), lo = SC("pool_lr_boot_lo"), hi = SC("pool_lr_boot_hi");
            snprintf(what, sizeof what, "%s%s", gs_paper(GS_PAPER_POOL_LR)->label, tag);
            r = add(t, what, "");
            if (!isfinite(lr)) { /* too few heads, or analyzed under the 2-means rule (issue 39.5) */
                snprintf(r->ours, sizeof r->ours, "%s", isfinite(SC("separation")) ? "n/a (analyze again)" : "n/a (needs 3 heads)");
                continue;
            }
            if (isfinite(lo))
                snprintf(r->ours, sizeof r->ours, "%s (95%% bootstrap over windows %s-%s)", num(a, lr), num(b, lo), num(d, hi));
            else snprintf(r->ours, sizeof r->ours, "%s", num(a, lr));
            snprintf(what, sizeof what, "%s%s", gs_paper(GS_PAPER_SEPARATION)->label, tag);
            r = add(t, what, "");
            snprintf(r->ours, sizeof r->ours, "%s", num(a, SC("separation")));
            double pn = SC("pool_lr_null_p_normal");
            if (isfinite(pn)) {
                snprintf(what, sizeof what, "null p +- MC SE%s", tag);
                r = add(t, what, "");
                snprintf(r->ours, sizeof r->ours,
                         "normal %.3f+-%.3f, uniform %.3f+-%.3f, Laplace %.3f+-%.3f, t3 %.3f+-%.3f, init %.3f+-%.3f", pn,
                         SC("pool_lr_null_se_normal"), SC("pool_lr_null_p_uniform"), SC("pool_lr_null_se_uniform"),
                         SC("pool_lr_null_p_laplace"), SC("pool_lr_null_se_laplace"), SC("pool_lr_null_p_t3"),
                         SC("pool_lr_null_se_t3"), SC("pool_lr_null_p_init"), SC("pool_lr_null_se_init"));
                double v = SC("pool_verdict"), pw = SC("pools_power_paper"), pf = SC("pools_power_fitted");
                snprintf(what, sizeof what, "pool verdict%s", tag);
                r = add(t, what, "");
                const char *word = !isfinite(v) ? "-" : v >= 1 ? "present" : v > 0 ? "inconclusive" : "not demonstrated";
                if (isfinite(pw))
                    snprintf(r->ours, sizeof r->ours, "%s (power %.2f on the paper's pools, %.2f on these)", word, pw, pf);
                else snprintf(r->ours, sizeof r->ours, "%s", word);
            }
#undef SC
        }
    }
    int64_t p = gp_analysis(st, c->run, GS_AN_PROBE);
    if (p > 0) {
        section(t, "4. Probe horizon (beyond the paper)");
        row *r = add_paper(t, GS_PAPER_PROBE_HORIZON);
        size_t len = (size_t)snprintf(r->ours, sizeof r->ours, "%s%s tokens",
                                      gp_scalar(st, p, GS_KEY_PROBE_HORIZON_CENSORED) > 0 ? ">= " : "",
                                      num(a, gp_scalar(st, p, GS_KEY_PROBE_HORIZON)));
        double hs = gp_scalar(st, p, GS_KEY_SPLITS), hmin = gp_scalar(st, p, GS_KEY_PROBE_HORIZON_MIN);
        double hmax = gp_scalar(st, p, GS_KEY_PROBE_HORIZON_MAX), bydoc = gp_scalar(st, p, GS_KEY_SPLIT_BY_DOCUMENT);
        if (isfinite(hs) && hs > 1 && isfinite(hmin) && isfinite(hmax) && len < sizeof r->ours)
            snprintf(r->ours + len, sizeof r->ours - len, " (%.0f to %.0f over %.0f splits by %s)", hmin, hmax, hs,
                     bydoc > 0 ? "document" : "window");
    }
    /* ablations (gpnscope ablate): the newest analysis per intervention */
    store_ablation_ref *refs = NULL;
    int n_refs = store_newest_ablations(st, c->run, &refs);
    if (n_refs < 0) gs_clear_error(); /* the table goes without them */
    {
        int first = 1;
        for (int q = 0; q < n_refs; q++) {
            int64_t aid = refs[q].id;
            double dl = gp_scalar(st, aid, "delta_ppl");
            if (!isfinite(dl)) continue;
            if (first) section(t, "4. Causal ablations (beyond the paper)");
            first = 0;
            char raw[200], vis[96];
            gp_ablation_label(&refs[q], "perplexity change: ", raw, sizeof raw);
            row *r = add(t, gp_text_visible(vis, sizeof vis, raw, (size_t)-1, 80), "not measured");
            double lo = gp_scalar(st, aid, "delta_ppl_ci_low"), hi = gp_scalar(st, aid, "delta_ppl_ci_high");
            double pb = gp_scalar(st, aid, "ppl_base"), pa = gp_scalar(st, aid, "ppl_ablated");
            size_t len = (size_t)snprintf(r->ours, sizeof r->ours, "%+.4g", dl);
            if (isfinite(lo) && isfinite(hi) && len < sizeof r->ours)
                len += (size_t)snprintf(r->ours + len, sizeof r->ours - len, " (95%% interval %+.4g to %+.4g)", lo, hi);
            if (isfinite(pb) && isfinite(pa) && len < sizeof r->ours)
                len += (size_t)snprintf(r->ours + len, sizeof r->ours - len, "; %.4g -> %.4g", pb, pa);
            double un = gp_scalar(st, aid, "n_units"), ud = gp_scalar(st, aid, "units_are_documents");
            if (isfinite(un) && len < sizeof r->ours)
                len += (size_t)snprintf(r->ours + len, sizeof r->ours - len, "; t-interval over %.0f %s", un,
                                        ud > 0 ? "documents" : "windows");
            /* beside its controls: the effect beyond each kind's mean */
            static const char *const kinds[3] = {"isotropic", "states", "heads"};
            for (int k = 0; k < 3 && len < sizeof r->ours; k++) {
                char key[64];
                snprintf(key, sizeof key, "control_%s_delta_nll_mean", kinds[k]);
                double cm = gp_scalar(st, aid, key);
                if (!isfinite(cm)) continue;
                snprintf(key, sizeof key, "control_%s_excess_delta_nll", kinds[k]);
                double ex = gp_scalar(st, aid, key);
                len += (size_t)snprintf(r->ours + len, sizeof r->ours - len,
                                        "; random %s control %+.3g nats/token, effect beyond it %+.3g", kinds[k], cm, ex);
            }
        }
        free(refs);
    }
}

/* ---------- escaping ---------- */

/* Store text as Markdown text: no markup, no HTML, and no math ('$' escaped:
 * a viewer with MathJax would typeset "$$x$$" from a token piece or a path). */
static void md_text(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '\\': case '`': case '*': case '_': case '[': case ']': case '|': case '~': case '#': case '$':
            fputc('\\', f); fputc(*s, f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void html_text(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* An item of a list in both pages, each escaped for its page: "- **KEY**:
 * TEXT" and "<li><b>KEY</b>: TEXT</li>", or without the key when it is NULL. */
static void list_item(FILE *m, FILE *h, const char *key, const char *text) {
    fputs("- ", m);
    fputs("<li>", h);
    if (key) {
        fputs("**", m);
        md_text(m, key);
        fputs("**: ", m);
        fputs("<b>", h);
        html_text(h, key);
        fputs("</b>: ", h);
    }
    md_text(m, text);
    fputs("\n", m);
    html_text(h, text);
    fputs("</li>\n", h);
}

/* A row of the summary table in both pages: its cells, each escaped. */
static void table_row(FILE *m, FILE *h, const char *const cells[3]) {
    for (int k = 0; k < 3; k++) {
        fputs(k ? " | " : "| ", m);
        md_text(m, cells[k]);
        fputs(k ? "</td><td>" : "<tr><td>", h);
        html_text(h, cells[k]);
    }
    fputs(" |\n", m);
    fputs("</td></tr>\n", h);
}

/* ---------- the verdicts (analysis "findings", written by gpnscope analyze) ---------- */

static void findings(const plot_ctx *c, FILE *m, FILE *h) {
    int64_t fid = gp_analysis(c->st, c->run, GS_AN_FINDINGS);
    if (fid <= 0) return;
    store_scalar_row *rows = NULL;
    int n_rows = store_analysis_scalar_rows(c->st, fid, &rows);
    if (n_rows < 0) { gs_clear_error(); return; }
    /* the paper's three structures in its order, then any other verdict by key */
    static const char *const order[] = {"default_direction", "content_horizon", "memory_pools", NULL};
    int any = 0;
    for (int pass = 0; pass < 4; pass++) {
        for (int i = 0; i < n_rows; i++) {
            int rank = 3;
            for (int k = 0; order[k]; k++)
                if (!strcmp(rows[i].key, order[k])) rank = k;
            if (rank != pass) continue;
            if (!any) {
                fputs("## The paper's three structures in this run\n\n", m);
                fputs("<h2>The paper's three structures in this run</h2>\n<ul>\n", h);
            }
            any = 1;
            char key[128], note[4096]; /* a pools sentence with its controls reaches ~1,500 characters, escaped more */
            gp_text_visible(key, sizeof key, rows[i].key, (size_t)-1, 60);
            gp_text_visible(note, sizeof note, rows[i].note, (size_t)-1, 0);
            list_item(m, h, key, note);
        }
    }
    free(rows);
    if (any) {
        fputs("\n", m);
        fputs("</ul>\n", h);
    }
}

/* ---------- the run ---------- */

static void run_line(const plot_ctx *c, char *out, size_t size) {
    store_run_info info;
    out[0] = 0;
    if (store_run_get(c->st, c->run, &info) != 0) { gs_clear_error(); return; }
    char vm[600], vc[600];
    const char *model = info.model_path, *corpus = info.corpus_path;
    snprintf(out, size, "%s run %lld (%s, %s): model %s%s%.12s%s, corpus %s; %lld windows of %d tokens, %s states, d = %d",
             info.kind, (long long)info.id, info.status, info.device[0] ? info.device : "-",
             model[0] ? gp_text_visible(vm, sizeof vm, model, (size_t)-1, 200) : "(unknown)",
             info.model_sha256[0] ? " (sha256 " : "", info.model_sha256, info.model_sha256[0] ? "...)" : "",
             corpus[0] ? gp_text_visible(vc, sizeof vc, corpus, (size_t)-1, 200) : "(unknown)",
             (long long)info.windows_done, info.seq_len, info.states, info.d_state);
}

/* the format shown in the report: png, then svg; pdf only as a link */
static const char *shown_format(unsigned formats) {
    return (formats & GS_PLOT_PNG) ? "png" : (formats & GS_PLOT_SVG) ? "svg" : "pdf";
}

/* the analyses whose numbers the summary table shows (its sections above) */
const unsigned gp_report_analyses =
    GS_AN_GEOMETRY | GS_AN_DEFAULT | GS_AN_HORIZON | GS_AN_RETENTION | GS_AN_PROBE | GS_AN_FINDINGS;

int gp_write_report(const plot_ctx *c, const gs_plot_result *res) {
    static const char *const fmt_names[3] = {"png", "svg", "pdf"};
    table *t = calloc(1, sizeof *t);
    if (!t) return gs_fail("out of memory");
    summary(c, t);
    char run[4096];
    run_line(c, run, sizeof run);
    const char *show = shown_format(c->o->formats);
    gp_file md = {0}, html = {0};
    if (gp_file_open(&md, c->dir, "report.md") != 0 || gp_file_open(&html, c->dir, "report.html") != 0) {
        gp_file_abort(&md);
        free(t);
        return -1;
    }
    FILE *m = md.f, *h = html.f;
    char title[700];
    snprintf(title, sizeof title, "Figures for %s", c->run_label);
    fputs("# ", m);
    md_text(m, title);
    fputs("\n\n", m);
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", h);
    html_text(h, title);
    fputs("</title>\n<style>\n"
          "body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; line-height: 1.45; color: #222; }\n"
          "img { max-width: 100%; border: 1px solid #ddd; }\n"
          "figure { margin: 2em 0; }\n"
          "figcaption { font-size: 0.95em; color: #333; margin-top: 0.4em; }\n"
          "table { border-collapse: collapse; margin: 1em 0; }\n"
          "td, th { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }\n"
          "tr.section td { background: #f0f0f0; font-weight: bold; }\n"
          ".warn { color: #a00; }\n"
          "code { background: #f4f4f4; padding: 0 0.2em; }\n"
          "</style>\n</head>\n<body>\n<h1>",
          h);
    html_text(h, title);
    fputs("</h1>\n", h);

    fputs("Store ", m);
    md_text(m, c->store_name);
    fputs("; ", m);
    md_text(m, run);
    fputs(".\n\nEach figure is a gnuplot script beside its data (`NAME.gp`, `NAME-*.dat`): edit it and run `gnuplot "
          "NAME.gp` in this folder (`gnuplot -e \"fmt='svg'\" NAME.gp` for svg or pdf). docs/plots.md in the gpnscope "
          "sources describes every figure.\n\n",
          m);
    fputs("<p>Store ", h);
    html_text(h, c->store_name);
    fputs("; ", h);
    html_text(h, run);
    fputs(".</p>\n<p>Each figure is a gnuplot script beside its data (<code>NAME.gp</code>, <code>NAME-*.dat</code>): "
          "edit it and run <code>gnuplot NAME.gp</code> in this folder (<code>gnuplot -e \"fmt='svg'\" NAME.gp</code> "
          "for svg or pdf). docs/plots.md in the gpnscope sources describes every figure.</p>\n",
          h);
    if (res->view_written) {
        fputs("**Interactive page**: [view.html](view.html): the run's first windows as text, each token coloured by "
              "its NLL, the entropy or the state (norm, projection on s_bar); hover a token for its values, click it for "
              "its exact effective attention where `gpnscope attention` stored it (docs/view.md).\n\n",
              m);
        fputs("<p><b>Interactive page</b>: <a href=\"view.html\">view.html</a>: the run's first windows as text, each "
              "token coloured by its NLL, the entropy or the state (norm, projection on s_bar); hover a token for its "
              "values, click it for its exact effective attention where <code>gpnscope attention</code> stored it "
              "(docs/view.md).</p>\n",
              h);
    }
    if (!res->gnuplot_found && c->o->render) {
        fputs("**Not rendered**: gnuplot was not found. The scripts and data are here; install gnuplot and run "
              "`gnuplot NAME.gp` in this folder for each figure.\n\n",
              m);
        fputs("<p class=\"warn\"><b>Not rendered</b>: gnuplot was not found. The scripts and data are here; install "
              "gnuplot and run <code>gnuplot NAME.gp</code> in this folder for each figure.</p>\n",
              h);
    }

    fputs("## Figures\n\n", m);
    fputs("<h2>Figures</h2>\n", h);
    for (int i = 0; i < res->n_figures; i++) {
        const gs_plot_figure *fg = &res->fig[i];
        fprintf(m, "### %d. ", i + 1);
        md_text(m, fg->title);
        fprintf(m, "\n\n![%s](%s.%s)\n\n", fg->name, fg->name, show);
        if (fg->reading) {
            fputs("**How to read it.** ", m);
            md_text(m, fg->reading);
            fputs("\n\n", m);
        }
        md_text(m, fg->caption);
        fputs("\n\nFrom the analyses: ", m);
        md_text(m, fg->sources);
        fprintf(m, ". Script: [%s.gp](%s.gp).", fg->name, fg->name);
        fprintf(h, "<figure id=\"%s\">\n<h3>%d. ", fg->name, i + 1);
        html_text(h, fg->title);
        fprintf(h, "</h3>\n<img src=\"%s.%s\" alt=\"%s\">\n<figcaption>", fg->name, show, fg->name);
        if (fg->reading) {
            fputs("<b>How to read it.</b> ", h);
            html_text(h, fg->reading);
            fputs("<br>", h);
        }
        html_text(h, fg->caption);
        fputs("<br>From the analyses: ", h);
        html_text(h, fg->sources);
        fprintf(h, ". Script: <a href=\"%s.gp\">%s.gp</a>.", fg->name, fg->name);
        for (int k = 0; k < 3; k++) {
            if (!(fg->rendered & (1u << k)) || !strcmp(fmt_names[k], show)) continue;
            fprintf(m, " Also [%s.%s](%s.%s).", fg->name, fmt_names[k], fg->name, fmt_names[k]);
            fprintf(h, " Also <a href=\"%s.%s\">%s.%s</a>.", fg->name, fmt_names[k], fg->name, fmt_names[k]);
        }
        if (fg->error[0]) {
            fputs(" **Not rendered:** ", m);
            md_text(m, fg->error);
            fputs(" <span class=\"warn\"><b>Not rendered:</b> ", h);
            html_text(h, fg->error);
            fputs("</span>", h);
        }
        fputs("\n\n", m);
        fputs("</figcaption>\n</figure>\n", h);
    }
    if (res->n_figures == 0) {
        fputs("No figures: the run has no analyses that have one.\n\n", m);
        fputs("<p>No figures: the run has no analyses that have one.</p>\n", h);
    }

    findings(c, m, h);
    fputs("## Summary: ours beside the paper\n\n"
          "The paper's figures are for its trained 1-layer GPN+M (130M parameters, d = 2496); definitions in "
          "docs/analyses.md.\n\n| quantity | ours | paper |\n|---|---|---|\n",
          m);
    fputs("<h2>Summary: ours beside the paper</h2>\n<p>The paper's figures are for its trained 1-layer GPN+M (130M "
          "parameters, d = 2496); definitions in docs/analyses.md.</p>\n<table>\n"
          "<tr><th>quantity</th><th>ours</th><th>paper</th></tr>\n",
          h);
    for (int i = 0; i < t->n; i++) {
        const row *r = &t->r[i];
        if (r->section) {
            fputs("| **", m);
            md_text(m, r->what);
            fputs("** | | |\n", m);
            fputs("<tr class=\"section\"><td colspan=\"3\">", h);
            html_text(h, r->what);
            fputs("</td></tr>\n", h);
            continue;
        }
        const char *const cells[3] = {r->what, r->ours, r->paper};
        table_row(m, h, cells);
    }
    fputs("</table>\n", h);

    /* which analyses, with which settings */
    fputs("\n## Analyses drawn from\n\n", m);
    fputs("<h2>Analyses drawn from</h2>\n<ul>\n", h);
    store_analysis_ref *an = NULL;
    int n_an = store_newest_analyses(c->st, c->run, &an);
    if (n_an < 0) gs_clear_error(); /* the list goes without them */
    for (int i = 0; i < n_an; i++) {
        char line[2300], vis[2400];
        snprintf(line, sizeof line, "%s (analysis %lld, %s, gpnscope %s): settings %s", an[i].name, (long long)an[i].id,
                 an[i].created_at, an[i].code_version, an[i].settings);
        gp_text_visible(vis, sizeof vis, line, (size_t)-1, 0);
        list_item(m, h, NULL, vis);
    }
    free(an);
    fputs("</ul>\n", h);
    if (res->notes[0]) {
        fputs("\nNotes:\n\n", m);
        fputs("<p>Notes:</p>\n<ul>\n", h);
        const char *p = res->notes;
        while (*p) {
            const char *e = strchr(p, '\n');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            char line[1024];
            snprintf(line, sizeof line, "%.*s", (int)len, p);
            list_item(m, h, NULL, line);
            p = e ? e + 1 : p + len;
        }
        fputs("</ul>\n", h);
    }
    fputs("</body>\n</html>\n", h);
    free(t);
    if (gp_file_commit(&md) != 0) { gp_file_abort(&html); return -1; }
    return gp_file_commit(&html);
}
