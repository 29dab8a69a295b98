/* gpnscope convert CHECKPOINT OUT.safetensors: the companion's JAX
 * checkpoint.pkl or a PyTorch .pt, read in C by the restricted pickle reader
 * (io/checkpoint/); see io/checkpoint/convert.h. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/json.h"
#include "cli/commands.h"
#include "io/checkpoint/convert.h"
#include "engine/model.h"

static const char *help =
    "usage: gpnscope convert CHECKPOINT OUT.safetensors|FOLDER [--dtype keep|f32|bf16] [--force]\n"
    "                        [--config CONFIG.json] [--meta KEY=VALUE]... [--allow-nonfinite]\n\n"
    "Convert a checkpoint into safetensors. The format is recognised from the\n"
    "file's bytes, not its name:\n"
    "  - the paper's companion JAX checkpoint.pkl (a pickle of {step,\n"
    "    data_position, params, opt_state}): the parameters, with the inferred\n"
    "    config in __metadata__; the optimizer state is skipped;\n"
    "  - a PyTorch checkpoint (torch.save's zip: a state dict, or the companion\n"
    "    trainer's {\"model\", \"optimizer\", \"scheduler\", \"step\"}): every tensor\n"
    "    of the state dict under its own name.\n"
    "The pickle is decoded by gpnscope's own restricted reader: numpy arrays,\n"
    "torch tensors and plain containers only; optax/flax/jax objects are skipped;\n"
    "a pickle that references anything else (os.system, eval, ...) is refused and\n"
    "nothing runs. No Python is needed.\n\n"
    "  --dtype keep|f32|bf16   output dtype (default keep: as stored; a .pkl's\n"
    "                          float64 arrays become F32). For a .pt, f32/bf16\n"
    "                          cast floating tensors and keep integer ones.\n"
    "  --force                 replace OUT if it exists (never the input itself)\n"
    "  --allow-nonfinite       write tensors that hold NaN or Inf (a diverged\n"
    "                          run); without it such a tensor is refused\n"
    "  --config FILE           the companion's model config (the JSON object its\n"
    "                          config is built from: vocab_size, hidden_dim,\n"
    "                          n_layers, n_heads, ffn_dim, ...), written into the\n"
    "                          output's __metadata__.config, where the families read\n"
    "                          what shapes cannot tell (a Transformer's heads); a\n"
    "                          shape that contradicts it is refused when loading\n"
    "  --meta KEY=VALUE        add (or override) a __metadata__ entry, e.g. the\n"
    "                          config a .pt's shapes cannot tell: --meta\n"
    "                          config='{\"n_heads\": 2, ...}' (repeatable)\n\n"
    "An existing FOLDER as OUT gets FOLDER/model.safetensors, the file every command\n"
    "reads when given the folder as its model.\n"
    "The output is written to a temporary file next to OUT, checked to load, and\n"
    "renamed into place, so OUT is never left half written.\n";

/* --config FILE: a JSON object, kept compact as the metadata entry "config=..." */
static char *config_meta(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { gs_fail("--config %s: %s", path, strerror(errno)); return NULL; }
    char *text = malloc(1 << 20);
    size_t n = text ? fread(text, 1, (1 << 20) - 1, f) : 0;
    int too_big = text && !feof(f);
    fclose(f);
    if (!text) { gs_fail("out of memory"); return NULL; }
    text[n] = 0;
    if (too_big) { free(text); gs_fail("--config %s: larger than 1 MB", path); return NULL; }
    char what[4200];
    snprintf(what, sizeof what, "--config %s", path);
    cJSON *j = gs_json_parse_strict(text, n, what);
    free(text);
    if (!j) return NULL;
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        gs_fail("--config %s: not a JSON object", path);
        return NULL;
    }
    char *compact = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    char *entry = compact ? malloc(strlen(compact) + 8) : NULL;
    if (entry) sprintf(entry, "config=%s", compact);
    free(compact);
    if (!entry) gs_fail("out of memory");
    return entry;
}

/* A companion model's output must load as a model, not only as safetensors. */
static int load_model(const char *path) {
    gs_model *m = gs_model_load(path);
    if (!m) return -1;
    gs_model_free(m);
    return 0;
}

int cmd_convert(int argc, char **argv) {
    ck_convert_opts o = {.dtype = CK_KEEP, .load_model = load_model};
    const char *meta[64];
    char *config = NULL;
    const char *pos[2] = {0};
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { fputs(help, stdout); return 0; }
        if (!strcmp(argv[i], "--force")) { o.force = 1; continue; }
        if (!strcmp(argv[i], "--allow-nonfinite")) { o.allow_nonfinite = 1; continue; }
        if (!strcmp(argv[i], "--meta")) {
            if (i + 1 >= argc || o.n_meta == 64) { fprintf(stderr, "gpnscope convert: --meta needs KEY=VALUE (at most 64)\n"); return 2; }
            meta[o.n_meta++] = argv[++i];
            o.meta = meta;
            continue;
        }
        if (!strcmp(argv[i], "--config")) {
            if (i + 1 >= argc || o.n_meta == 64 || config) { fprintf(stderr, "gpnscope convert: --config needs one FILE\n"); return 2; }
            if (!(config = config_meta(argv[++i]))) { fprintf(stderr, "gpnscope convert: %s\n", gs_error()); return 2; }
            meta[o.n_meta++] = config;
            o.meta = meta;
            continue;
        }
        if (!strcmp(argv[i], "--dtype")) {
            const char *v = i + 1 < argc ? argv[++i] : "";
            if (!strcmp(v, "keep")) o.dtype = CK_KEEP;
            else if (!strcmp(v, "f32")) o.dtype = CK_F32;
            else if (!strcmp(v, "bf16")) o.dtype = CK_BF16;
            else { fprintf(stderr, "gpnscope convert: --dtype must be keep, f32 or bf16, not '%s'\n", v); return 2; }
            continue;
        }
        if (!strncmp(argv[i], "--", 2)) { fprintf(stderr, "gpnscope convert: unknown option %s (see --help)\n", argv[i]); return 2; }
        if (npos == 2) { fputs(help, stderr); return 2; }
        pos[npos++] = argv[i];
    }
    if (npos != 2) { fputs(help, stderr); free(config); return 2; }
    /* an existing folder as OUT (models/mine) gets the model.safetensors every command reads from a folder */
    char out_file[4200];
    struct stat sb;
    if (stat(pos[1], &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(out_file, sizeof out_file, "%s%smodel.safetensors", pos[1], pos[1][strlen(pos[1]) - 1] == '/' ? "" : "/");
        pos[1] = out_file;
    }
    char summary[512] = "";
    int rc = ck_convert(pos[0], pos[1], &o, summary, sizeof summary);
    free(config);
    if (rc != 0) {
        fprintf(stderr, "gpnscope convert: %s\n", gs_error());
        return 1;
    }
    printf("converted %s -> %s: %s\n", pos[0], pos[1], summary);
    return 0;
}
