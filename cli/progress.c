#include "cli/progress.h"

#include "base/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double progress_now(void) { return gs_now(); }

void progress_start(progress *p, const char *label, const char *unit, int64_t total) {
    memset(p, 0, sizeof *p);
    p->label = label;
    p->unit = unit;
    p->total = total;
    p->started = progress_now();
    p->enabled = isatty(STDERR_FILENO) ? PROGRESS_TERMINAL : PROGRESS_OFF;
}

void progress_plain(progress *p, double every, int64_t chunk, const char *chunk_unit, const char *unit_word) {
    if (p->enabled != PROGRESS_OFF || isatty(STDERR_FILENO)) return;
    p->enabled = PROGRESS_PLAIN;
    /* GPNSCOPE_PROGRESS_SECONDS: another spacing (a CI log may want 60; 0: a line at every update) */
    const char *env = getenv("GPNSCOPE_PROGRESS_SECONDS");
    char *end = NULL;
    double e = env && *env ? strtod(env, &end) : -1;
    p->every = env && *env && !*end && e >= 0 ? e : every;
    p->chunk = chunk > 0 ? chunk : 0;
    p->chunk_unit = chunk_unit;
    p->unit_word = unit_word;
    p->last_draw = p->started; /* the first line after `every`: a short command prints its last line only */
}

/* 24576 -> "24,576" */
static const char *grouped(int64_t v, char *buf, size_t size) {
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%lld", (long long)(v < 0 ? -v : v)), at = 0;
    if (v < 0 && (size_t)at + 1 < size) buf[at++] = '-';
    for (int i = 0; i < n && (size_t)at + 1 < size; i++) {
        if (i && (n - i) % 3 == 0 && (size_t)at + 2 < size) buf[at++] = ',';
        buf[at++] = digits[i];
    }
    buf[at] = 0;
    return buf;
}

/* a wall time: "0.4 s", "12 s", "5 min 20 s", "2 h 05 min" */
static const char *duration(double s, char *buf, size_t size) {
    long t = s > 0 ? (long)(s + 0.5) : 0;
    if (s < 9.95) snprintf(buf, size, "%.1f s", s > 0 ? s : 0);
    else if (t < 60) snprintf(buf, size, "%ld s", t);
    else if (t < 3600) snprintf(buf, size, "%ld min %ld s", t / 60, t % 60);
    else snprintf(buf, size, "%ld h %02ld min", t / 3600, t / 60 % 60);
    return buf;
}

/* the time left, as a person would say it: "about 40 s left", "about 2 min left", "about 1 h 10 min left" */
static const char *time_left(double s, char *buf, size_t size) {
    if (s < 60) snprintf(buf, size, "about %.0f s left", s < 1 ? 1 : s);
    else if (s < 3600) snprintf(buf, size, "about %.0f min left", s / 60);
    else snprintf(buf, size, "about %ld h %02ld min left", (long)(s / 3600), (long)(s / 60) % 60);
    return buf;
}

/* "record: 12/64 windows, 24,576 tokens, 410 tok/s, about 2 min left", ending
 * "done in 5 min 20 s" when final: one line of plain text */
static void draw_plain(progress *p, int64_t done, int final) {
    double el = progress_now() - p->started, rate = el > 0 ? done / el : 0;
    char line[320], a[32], b[32], c[32], t[48];
    size_t at = (size_t)snprintf(line, sizeof line, "%s: ", p->label);
    const char *word = p->unit_word ? p->unit_word : p->unit;
    if (p->chunk && p->total > 0)
        at += (size_t)snprintf(line + at, sizeof line - at, "%lld/%lld %s, %s %s", (long long)(done / p->chunk),
                               (long long)(p->total / p->chunk), p->chunk_unit, grouped(done, a, sizeof a), word);
    else if (p->total > 0)
        at += (size_t)snprintf(line + at, sizeof line - at, "%s/%s %s", grouped(done, a, sizeof a),
                               grouped(p->total, b, sizeof b), word);
    else at += (size_t)snprintf(line + at, sizeof line - at, "%s %s", grouped(done, a, sizeof a), word);
    if (at < sizeof line)
        at += (size_t)snprintf(line + at, sizeof line - at, ", %s %s/s", grouped((int64_t)(rate + 0.5), c, sizeof c), p->unit);
    if (at < sizeof line && final) snprintf(line + at, sizeof line - at, ", done in %s", duration(el, t, sizeof t));
    else if (at < sizeof line && p->total > 0 && rate > 0 && done < p->total)
        snprintf(line + at, sizeof line - at, ", %s", time_left((p->total - done) / rate, t, sizeof t));
    fprintf(stderr, "%s%s%s\n", line, p->extra[0] ? " " : "", p->extra);
    fflush(stderr);
}

static void draw(progress *p, int64_t done, int final) {
    double el = progress_now() - p->started, rate = el > 0 ? done / el : 0;
    char eta[32] = "";
    if (p->total > 0 && rate > 0 && !final) {
        double left = (p->total - done) / rate;
        snprintf(eta, sizeof eta, " ETA %dm%02ds", (int)(left / 60), (int)left % 60);
    }
    if (p->total > 0) {
        int width = 24, filled = (int)(width * (double)done / p->total);
        if (filled > width) filled = width;
        char bar[32];
        memset(bar, '#', (size_t)filled);
        memset(bar + filled, '.', (size_t)(width - filled));
        bar[width] = 0;
        fprintf(stderr, "\r%s [%s] %lld/%lld %s, %.0f %s/s%s %s\033[K", p->label, bar, (long long)done,
                (long long)p->total, p->unit, rate, p->unit, eta, p->extra);
    } else {
        fprintf(stderr, "\r%s %lld %s, %.0f %s/s %s\033[K", p->label, (long long)done, p->unit, rate, p->unit, p->extra);
    }
    if (final) fputc('\n', stderr);
    fflush(stderr);
}

void progress_update(progress *p, int64_t done) {
    if (p->enabled == PROGRESS_OFF) return;
    double t = progress_now();
    if (t - p->last_draw < (p->enabled == PROGRESS_PLAIN ? p->every : 0.1)) return;
    p->last_draw = t;
    if (p->enabled == PROGRESS_PLAIN) draw_plain(p, done, 0);
    else draw(p, done, 0);
}

void progress_end(progress *p, int64_t done) {
    if (p->enabled == PROGRESS_PLAIN) draw_plain(p, done, 1);
    else if (p->enabled) draw(p, done, 1);
}

void progress_step(progress *p, int k, int n, const char *name) {
    const double t = progress_now();
    char el[32], took[32];
    if (p->steps > 0 && p->step < p->steps) { /* the part that ran until now: its time, for the last line */
        size_t len = strlen(p->step_times);
        if (len < sizeof p->step_times)
            snprintf(p->step_times + len, sizeof p->step_times - len, "%s%s %s", len ? ", " : "", p->step_name,
                     duration(t - p->step_started, took, sizeof took));
    }
    p->step = k;
    p->steps = n;
    p->step_started = t;
    snprintf(p->step_name, sizeof p->step_name, "%s", k < n && name ? name : "");
    if (p->enabled == PROGRESS_OFF) return;
    duration(t - p->started, el, sizeof el);
    if (k >= n) {
        fprintf(stderr, "%s%s: %d part%s in %s (%s)%s\n", p->enabled == PROGRESS_TERMINAL ? "\r" : "", p->label, n,
                n == 1 ? "" : "s", el, p->step_times, p->enabled == PROGRESS_TERMINAL ? "\033[K" : "");
    } else if (p->enabled == PROGRESS_TERMINAL) {
        fprintf(stderr, "\r%s: %s (%d/%d) ... %s\033[K", p->label, p->step_name, k + 1, n, el);
    } else if (t - p->last_draw >= p->every) {
        p->last_draw = t;
        fprintf(stderr, "%s: %s (%d/%d) ... %s\n", p->label, p->step_name, k + 1, n, el);
    }
    fflush(stderr);
}

void progress_clear(progress *p) {
    if (p->enabled == PROGRESS_TERMINAL) fputs("\r\033[K", stderr);
}

int progress_callback(void *ctx, int64_t done, int64_t total) {
    (void)total;
    progress_update(ctx, done);
    return 0;
}
