/* The demo's models (cli/demo_models.h). */
#include "cli/demo_models.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/arch/layer_pattern.h"
#include "engine/model.h"
#include "train/config_json.h"

/* In the demo's order: the main model, then the baselines issue 20 ships
 * beside it, all trained by gpnscope train on data/shards/train with one
 * recipe (docs/model.md, "The shipped models"). */
static const char *const shipped[] = {"models/gpnm15-small", "models/tpp-small", "models/gdn-small", "models/rt-small"};
#define N_SHIPPED (int)(sizeof shipped / sizeof shipped[0])

static void shipped_path(int i, char *out, size_t size) {
    snprintf(out, size, "%s/%s/model.safetensors", GPNSCOPE_SOURCE_DIR, shipped[i]);
}

static int is_file(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

void demo_shipped_models(demo_model *m, int max, int *n_found, const char *missing[], int *n_missing) {
    *n_found = *n_missing = 0;
    for (int i = 0; i < N_SHIPPED; i++) {
        char path[4096];
        shipped_path(i, path, sizeof path);
        if (i > 0 && !is_file(path)) { missing[(*n_missing)++] = shipped[i]; continue; }
        if (*n_found == max) continue;
        demo_model *x = &m[(*n_found)++];
        memset(x, 0, sizeof *x);
        snprintf(x->path, sizeof x->path, "%s", path);
        snprintf(x->name, sizeof x->name, "%s", shipped[i]);
        x->shipped = 1;
        x->trained_seq_len = train_config_seq_len(path);
    }
}

void demo_model_from_path(demo_model *m, const char *arg) {
    memset(m, 0, sizeof *m);
    /* a model folder (models/tpp-small) stands for its model.safetensors, as in every command */
    char file[4200];
    const char *path = gs_model_file(arg, file, sizeof file);
    if (!path) { gs_clear_error(); path = arg; } /* a folder without one: the demo's file check names it */
    snprintf(m->path, sizeof m->path, "%s", path);
    snprintf(m->name, sizeof m->name, "%s", arg);
    m->trained_seq_len = train_config_seq_len(path);
    /* the same file by another spelling (./models/..., an absolute path) is still the shipped model */
    char given[PATH_MAX], known[PATH_MAX], p[4096];
    if (!realpath(path, given)) return;
    for (int i = 0; i < N_SHIPPED; i++) {
        shipped_path(i, p, sizeof p);
        if (realpath(p, known) && !strcmp(given, known)) {
            snprintf(m->name, sizeof m->name, "%s", shipped[i]);
            m->shipped = 1;
        }
    }
}

const char *demo_shipped_domain(const char *file) {
    static const char *const every[] = {"models/gpnm15-small", "models/tpp-small", "models/gdn-small", "models/rt-small",
                                        "models/gpnm-small"};
    char given[PATH_MAX], known[PATH_MAX], buf[4200], p[4096];
    const char *f = gs_model_file(file, buf, sizeof buf);
    if (!f) { gs_clear_error(); return NULL; }
    if (!realpath(f, given)) return NULL;
    for (size_t i = 0; i < sizeof every / sizeof *every; i++) {
        snprintf(p, sizeof p, "%s/%s/model.safetensors", GPNSCOPE_SOURCE_DIR, every[i]);
        if (realpath(p, known) && !strcmp(given, known))
            return "the Python documentation's reStructuredText sources and fortunes quotations (Debian packages "
                   "python3.11-doc, fortunes; docs/model.md): on other text, your own prose say, its perplexity is far "
                   "higher (measure it with gpnscope eval)";
    }
    return NULL;
}

/* "blocks.{i}.X" -> "blocks.*.X" (record --sites: every layer); other names as they are */
static void every_layer(const gs_site *s, char *out, size_t size) {
    if (s->per_layer) gs_pattern_fill(s->name, "*", out, size);
    else snprintf(out, size, "%s", s->name);
}

int demo_model_sites(demo_model *m) {
    gs_model *model = gs_model_load(m->path);
    if (!model) return gs_fail_context("%s: ", m->path);
    const gs_family *f = gs_family_of(&model->cfg);
    const gs_site *state = f ? gs_site_of_role(f, &model->cfg, GS_ROLE_STATE) : NULL;
    const gs_site *decay = f ? gs_site_of_role(f, &model->cfg, GS_ROLE_DECAY) : NULL;
    const int last = model->cfg.n_layers - 1;
    int rc = 0;
    if (!state) {
        rc = gs_fail("%s: its family (%s) has no state site to compare", m->path, f ? f->name : "unknown");
    } else {
        /* compare reads every state-role row (one per layer) and the decay site of each row's layer */
        char s_all[96], d_all[96] = "";
        every_layer(state, s_all, sizeof s_all);
        gs_site_format(state, last, m->state, sizeof m->state);
        m->decay[0] = 0;
        if (decay) {
            every_layer(decay, d_all, sizeof d_all);
            gs_site_format(decay, last, m->decay, sizeof m->decay);
        }
        snprintf(m->sites, sizeof m->sites, "%s%s%s", s_all, decay ? "," : "", d_all);
    }
    gs_model_free(model);
    return rc;
}
