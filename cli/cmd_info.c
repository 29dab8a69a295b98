/* gpnscope info MODEL [--json]: architecture, sizes, parameter count by group,
 * dtype and content hash of a checkpoint. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/demo_models.h"
#include "cli/options.h"
#include "engine/arch/family.h"
#include "io/checkpoint/safetensors.h"
#include "engine/model.h"

static const char *help =
    "usage: gpnscope info MODEL.safetensors [--json]\n\n"
    "Describe a GPN / GPN+M checkpoint: the architecture and sizes inferred from its\n"
    "tensor shapes, parameter counts by group, the stored dtype, tensors present in\n"
    "the file that the architecture does not use, the file's SHA-256, and the\n"
    "model's sites: the names `record --sites`, `ablate` and the probes take\n"
    "(docs/hooks.md), with their kind and width; and where each size came from\n"
    "(the shape of which tensor, which __metadata__ key, or a fixed bound). For a\n"
    "shipped model (models/ in the source tree) it also says what text it was\n"
    "trained on (\"trained on\"; JSON trained_on).\n\n"
    "  --json   print one JSON object instead of a table\n";

/* The family's "NAME VALUE (SOURCE)" lines into buf (empty if it says none).
 * The file is opened again because the model keeps no metadata. */
static void config_sources(const gs_family *fam, const gs_model *m, char *buf, size_t size) {
    buf[0] = 0;
    if (!fam || !fam->describe) return;
    st_file *f = safetensors_open(m->path);
    if (!f) return;
    fam->describe(f, &m->cfg, buf, size);
    safetensors_close(f);
}

/* One line "NAME VALUE (SOURCE)" split in place; 0 when it is not one. */
static int split_source(char *line, char **name, char **value, char **source) {
    char *sp = strchr(line, ' '), *open = strchr(line, '(');
    size_t len = strlen(line);
    if (!sp || !open || open < sp || !len || line[len - 1] != ')') return 0;
    *sp = 0;
    line[len - 1] = 0;
    if (open[-1] == ' ') open[-1] = 0; /* open > sp >= line: the value ends before " (" */
    *name = line, *value = sp + 1, *source = open + 1;
    return 1;
}

int cmd_info(int argc, char **argv) {
    int json = 0;
    const cli_opt opts[] = {{CLI_FLAG("json", &json)}, {0}};
    int parsed = cli_parse_options(&(cli_command_opts){"info", help, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (optind != argc - 1) { fputs(help, stderr); return 2; }
    gs_model *m = gs_model_load(argv[optind]);
    if (!m) { fprintf(stderr, "gpnscope info: %s\n", gs_error()); return 1; }
    const gs_config *c = &m->cfg;
    const gs_family *fam = gs_family_of(c);
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(c, specs);
    /* parameters by group, in order of first appearance */
    const char *groups[GS_MAX_TENSORS];
    size_t counts[GS_MAX_TENSORS];
    int ng = 0;
    for (int i = 0; i < n; i++) {
        int g = 0;
        while (g < ng && strcmp(groups[g], specs[i].group)) g++;
        if (g == ng) { groups[ng] = specs[i].group; counts[ng++] = 0; }
        counts[g] += specs[i].numel;
    }
    char sources[4096];
    config_sources(fam, m, sources, sizeof sources);
    const char *domain = demo_shipped_domain(m->path); /* a shipped model: the text it knows */
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", m->path);
        cJSON_AddStringToObject(o, "arch", gs_arch_name(c->arch));
        cJSON_AddNumberToObject(o, "n_layers", c->n_layers);
        cJSON_AddNumberToObject(o, "d_state", c->d);
        cJSON_AddNumberToObject(o, "d_emb", c->e);
        cJSON_AddNumberToObject(o, "d_ffn", c->f);
        cJSON_AddNumberToObject(o, "n_heads", c->H);
        cJSON_AddNumberToObject(o, "d_key", c->dk);
        cJSON_AddNumberToObject(o, "d_val", c->dv);
        cJSON_AddNumberToObject(o, "vocab_size", c->V);
        cJSON_AddBoolToObject(o, "decoder_bias", c->decoder_bias);
        cJSON_AddNumberToObject(o, "parameters", (double)m->n_params);
        cJSON *g = cJSON_AddObjectToObject(o, "parameters_by_group");
        for (int i = 0; i < ng; i++) cJSON_AddNumberToObject(g, groups[i], (double)counts[i]);
        cJSON_AddStringToObject(o, "dtype", m->source_dtype);
        cJSON_AddStringToObject(o, "sha256", m->hash);
        if (domain) cJSON_AddStringToObject(o, "trained_on", domain);
        /* {"n_heads": {"value": "2", "source": "__metadata__.config n_heads"}, ...} */
        cJSON *src = cJSON_AddObjectToObject(o, "config_sources");
        char copy[sizeof sources], *save = NULL, *name, *value, *from;
        memcpy(copy, sources, sizeof copy);
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (!split_source(line, &name, &value, &from)) continue;
            cJSON *e = cJSON_AddObjectToObject(src, name);
            cJSON_AddStringToObject(e, "value", value);
            cJSON_AddStringToObject(e, "source", from);
        }
        cJSON *sites = cJSON_AddArrayToObject(o, "sites");
        for (int i = 0; fam && i < fam->n_sites; i++) {
            const gs_site *st = &fam->sites[i];
            if (!gs_site_present(st, c)) continue;
            cJSON *so = cJSON_CreateObject();
            cJSON_AddStringToObject(so, "name", st->name);
            if (st->alias) cJSON_AddStringToObject(so, "alias", st->alias);
            cJSON_AddStringToObject(so, "kind", gs_site_kind_name(st->kind));
            cJSON_AddBoolToObject(so, "per_layer", st->per_layer);
            cJSON_AddNumberToObject(so, "width", gs_site_width(st, c));
            cJSON_AddStringToObject(so, "what", st->what);
            cJSON_AddItemToArray(sites, so);
        }
        cJSON *x = cJSON_AddArrayToObject(o, "extra_tensors");
        for (int i = 0; i < m->n_extra; i++) cJSON_AddItemToArray(x, cJSON_CreateString(m->extra_tensors[i]));
        char *s = cJSON_Print(o);
        puts(s);
        free(s);
        cJSON_Delete(o);
    } else {
        printf("model        %s\n", m->path);
        printf("architecture %s (%s), %d layer%s%s\n", gs_arch_name(c->arch), fam ? fam->title : "?", c->n_layers,
               c->n_layers == 1 ? "" : "s", c->decoder_bias ? ", decoder bias" : "");
        printf("sizes        V=%d d_state=%d d_emb=%d d_ffn=%d", c->V, c->d, c->e, c->f);
        if (c->H) printf(" heads=%d d_key=%d d_val=%d", c->H, c->dk, c->dv);
        printf("\n");
        if (sources[0]) {
            printf("sources      (where each size came from)\n");
            char copy[sizeof sources], *save = NULL;
            memcpy(copy, sources, sizeof copy);
            for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                printf("  %s\n", line);
        }
        printf("parameters   %zu (%.2f M), stored as %s, computed in float32\n", m->n_params, m->n_params / 1e6, m->source_dtype);
        for (int i = 0; i < ng; i++) printf("  %-14s %12zu\n", groups[i], counts[i]);
        printf("sha256       %s\n", m->hash);
        if (domain) printf("trained on   %s\n", domain);
        if (m->n_extra) {
            printf("unused       %d tensor%s in the file not used by %s:", m->n_extra, m->n_extra == 1 ? "" : "s", gs_arch_name(c->arch));
            for (int i = 0; i < m->n_extra; i++) printf(" %s", m->extra_tensors[i]);
            printf("\n");
        }
        printf("sites        (per-layer sites: blocks.{i}.NAME for i < %d; old name in the third column)\n", c->n_layers);
        for (int i = 0; fam && i < fam->n_sites; i++) {
            const gs_site *st = &fam->sites[i];
            if (!gs_site_present(st, c)) continue;
            char kind[48];
            snprintf(kind, sizeof kind, "%s[%d]", gs_site_kind_name(st->kind), gs_site_width(st, c));
            printf("  %-24s %-22s %-16s %s\n", st->name, kind, st->alias ? st->alias : "", st->what);
        }
    }
    gs_model_free(m);
    return 0;
}
