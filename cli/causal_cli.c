/* cli/causal_cli.h */
#include "cli/causal_cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "cli/options.h"
#include "store/experiments.h"

gs_tokenizer *causal_tokenizer(const char *cmd, const char *path, const gs_model *m, int required, int *failed) {
    *failed = 0;
    int given = path != NULL;
    if (!path) path = cli_default_tokenizer();
    if (!path) {
        if (!required) return NULL;
        fprintf(stderr, "gpnscope %s: no tokenizer: pass --tokenizer FILE, set GPNSCOPE_TOKENIZER, or run scripts/fetch-tokenizer.sh\n", cmd);
        *failed = 1;
        return NULL;
    }
    gs_tokenizer *t = tokenizer_load(path);
    if (t && tokenizer_vocab_size(t) > m->cfg.V && !given && !required) { /* the default is not this model's */
        tokenizer_free(t);
        return NULL;
    }
    if (t && tokenizer_vocab_size(t) > m->cfg.V) {
        gs_fail("the tokenizer %s has %d pieces but the model's vocabulary is %d: they do not belong together", path,
                tokenizer_vocab_size(t), m->cfg.V);
        tokenizer_free(t);
        t = NULL;
    }
    if (!t) {
        fprintf(stderr, "gpnscope %s: %s\n", cmd, gs_error());
        *failed = 1;
    }
    return t;
}

int causal_numbers(const char *cmd, const char *option, const char *list, double *out, int max) {
    int n = 0;
    const char *p = list;
    while (*p) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || !isfinite(v) || (*end && *end != ',') || n == max) {
            fprintf(stderr, "gpnscope %s: --%s %s: up to %d finite numbers separated by commas\n", cmd, option, list, max);
            return -1;
        }
        out[n++] = v;
        p = *end ? end + 1 : end;
    }
    if (n == 0) fprintf(stderr, "gpnscope %s: --%s: give at least one number\n", cmd, option);
    return n ? n : -1;
}

const char *causal_default_store(const char *cmd, const char *from) {
    struct stat sb;
    if (!from) return NULL;
    if (stat(from, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_nlink == 1 && access(from, W_OK) == 0) return from;
    fprintf(stderr, "note: gpnscope %s: %s cannot be written here, so the results are not stored (--store OUT.db keeps "
                    "them elsewhere)\n", cmd, from);
    return NULL;
}

int causal_plan_check(const char *cmd, const char *plan, long long steps, long long max_steps, const char *fewer) {
    if (steps > max_steps) {
        fprintf(stderr, "gpnscope %s: the sweep plans %s, more than --max-steps %lld: raise --max-steps, or %s\n", cmd,
                plan, max_steps, fewer);
        return -1;
    }
    fprintf(stderr, "%s: %s\n", cmd, plan);
    return 0;
}
