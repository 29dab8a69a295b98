/* Models, their configuration and sites (api/gpnscope.h). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "base/error.h"
#include "probes/probes.h"

static const char *role_name(gs_site_role r) {
    return r == GS_ROLE_STATE ? "state" : r == GS_ROLE_DECAY ? "decay" : r == GS_ROLE_LOGITS ? "logits"
         : r == GS_ROLE_NLL   ? "nll"   : "";
}

static void fill_site(const gs_config *c, const gs_site *s, int layer, const char *name, gs_api_site *out) {
    out->name = name;
    out->layer = s->per_layer ? layer : -1;
    out->width = gs_site_width(s, c);
    out->kind = gs_site_kind_name(s->kind);
    out->role = role_name(s->role);
}

/* info --json's names for the sizes, and the options only some families have when set */
static char *config_json(const gs_model *m, const gs_family *f) {
    const gs_config *c = &m->cfg;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "arch", f->name);
    cJSON_AddStringToObject(o, "title", f->title);
    cJSON_AddStringToObject(o, "path", m->path);
    cJSON_AddNumberToObject(o, "n_layers", c->n_layers);
    cJSON_AddNumberToObject(o, "d_state", c->d);
    cJSON_AddNumberToObject(o, "d_emb", c->e);
    cJSON_AddNumberToObject(o, "d_ffn", c->f);
    cJSON_AddNumberToObject(o, "n_heads", c->H);
    cJSON_AddNumberToObject(o, "d_key", c->dk);
    cJSON_AddNumberToObject(o, "d_val", c->dv);
    cJSON_AddNumberToObject(o, "vocab_size", c->V);
    cJSON_AddBoolToObject(o, "decoder_bias", c->decoder_bias);
    if (c->conv) cJSON_AddNumberToObject(o, "conv_size", c->conv);
    if (c->norm_eps > 0) cJSON_AddNumberToObject(o, "norm_eps", c->norm_eps);
    if (c->clip_qkv > 0) cJSON_AddNumberToObject(o, "clip_qkv", c->clip_qkv);
    if (c->alibi_bias_max > 0) cJSON_AddNumberToObject(o, "alibi_bias_max", c->alibi_bias_max);
    if (c->n_classes) cJSON_AddNumberToObject(o, "n_classes", c->n_classes);
    cJSON_AddNumberToObject(o, "predicts_first_token", f->predicts_first_token);
    cJSON_AddBoolToObject(o, "language_model", f->not_lm == NULL);
    cJSON_AddNumberToObject(o, "parameters", (double)m->n_params);
    cJSON_AddStringToObject(o, "dtype", m->source_dtype);
    cJSON_AddStringToObject(o, "sha256", m->hash);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

/* every present site, per-layer ones once per layer, their names in one block */
static int list_sites(gs_api_model *a) {
    const gs_config *c = &a->m->cfg;
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        for (int i = 0; i < a->f->n_sites; i++) {
            const gs_site *s = &a->f->sites[i];
            if (!gs_site_present(s, c)) continue;
            for (int l = 0; l < (s->per_layer ? c->n_layers : 1); l++, n++) {
                if (!pass) continue;
                gs_site_format(s, l, a->names + (size_t)n * GS_API_NAME_MAX, GS_API_NAME_MAX);
                fill_site(c, s, l, a->names + (size_t)n * GS_API_NAME_MAX, &a->sites[n]);
            }
        }
        if (!pass && (!(a->sites = calloc((size_t)n + 1, sizeof *a->sites)) ||
                      !(a->names = calloc((size_t)n + 1, GS_API_NAME_MAX))))
            return gs_fail("out of memory for %d sites", n);
    }
    a->n_sites = n;
    return 0;
}

int gs_api_model_open(const char *path, gs_api_model **out) {
    *out = NULL;
    if (!path) return gs_fail("no model path");
    gs_api_model *a = calloc(1, sizeof *a);
    if (!a) return gs_fail("out of memory");
    if (!(a->m = gs_model_load(path)) || !(a->f = gs_family_of(&a->m->cfg))) goto fail;
    if (!(a->config = config_json(a->m, a->f))) { gs_fail("out of memory"); goto fail; }
    if (list_sites(a)) goto fail;
    *out = a;
    return 0;
fail:
    gs_api_model_close(a);
    return -1;
}

void gs_api_model_close(gs_api_model *a) {
    if (!a) return;
    gs_engine_free(a->engine);
    gs_model_free(a->m);
    free(a->config);
    free(a->sites);
    free(a->names);
    free(a);
}

const char *gs_api_model_family(const gs_api_model *a) { return a->f->name; }
const char *gs_api_model_config(const gs_api_model *a) { return a->config; }
int gs_api_model_vocab(const gs_api_model *a) { return a->m->cfg.V; }
int gs_api_model_n_sites(const gs_api_model *a) { return a->n_sites; }

int gs_api_model_site(const gs_api_model *a, int i, gs_api_site *out) {
    if (i < 0 || i >= a->n_sites) return gs_fail("site %d: the model has sites 0..%d", i, a->n_sites - 1);
    *out = a->sites[i];
    return 0;
}

int gs_api_model_find_site(const gs_api_model *a, const char *name, gs_api_site *out) {
    const gs_site *s;
    int layer;
    if (!name) return gs_fail("no site name");
    if (probe_parse_site(&a->m->cfg, name, &s, &layer)) return -1;
    if (layer < 0) { /* every layer: the site's pattern ("blocks.{i}.hook_mlp_out") names it */
        fill_site(&a->m->cfg, s, 0, s->name, out);
        out->layer = -1;
        return 0;
    }
    char want[GS_API_NAME_MAX];
    gs_site_format(s, layer, want, sizeof want);
    for (int i = 0; i < a->n_sites; i++)
        if (!strcmp(a->sites[i].name, want)) return *out = a->sites[i], 0;
    return gs_fail("site '%s' (%s) is not in the model's list", name, want);
}
