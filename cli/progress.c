#include "cli/progress.h"

#include "base/clock.h"

#include <stdio.h>
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
    p->enabled = isatty(STDERR_FILENO);
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
    if (!p->enabled) return;
    double t = progress_now();
    if (t - p->last_draw < 0.1) return;
    p->last_draw = t;
    draw(p, done, 0);
}

void progress_end(progress *p, int64_t done) {
    if (p->enabled) draw(p, done, 1);
}

int progress_callback(void *ctx, int64_t done, int64_t total) {
    (void)total;
    progress_update(ctx, done);
    return 0;
}
