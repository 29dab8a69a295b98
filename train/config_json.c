/* The readers of train/config_json.h (moved from train.c so the
 * task trainer reads its config the same way). */
#include "train/config_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/json.h"
#include "engine/model.h"
#include "train/train.h"

/* Every key of a section must be one the reader asks for. */
int check_keys(cJSON *obj, const char *section, const char *const *known) {
    for (cJSON *it = obj ? obj->child : NULL; it; it = it->next) {
        int ok = 0;
        for (int i = 0; known[i] && !ok; i++) ok = strcmp(known[i], it->string) == 0;
        if (!ok) {
            char list[512] = "";
            for (int i = 0; known[i]; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", known[i]);
            return gs_fail("unknown key \"%s\" in \"%s\" (known: %s)", it->string, section, list);
        }
    }
    return 0;
}

int get_num(jsec *s, const char *key, double *out, int required, double lo, double hi) {
    if (*s->err) return -1;
    cJSON *v = s->obj ? cJSON_GetObjectItemCaseSensitive(s->obj, key) : NULL;
    if (!v) {
        if (required) { *s->err = 1; return gs_fail("missing \"%s\" in \"%s\"", key, s->section); }
        return 0;
    }
    if (!cJSON_IsNumber(v)) { *s->err = 1; return gs_fail("\"%s.%s\" must be a number", s->section, key); }
    if (!(v->valuedouble >= lo && v->valuedouble <= hi)) {
        *s->err = 1;
        return gs_fail("\"%s.%s\" = %g is out of range [%g, %g]", s->section, key, v->valuedouble, lo, hi);
    }
    *out = v->valuedouble;
    return 0;
}

/* An integer key through gs_json_int, which checks the range before any cast. */
static void get_integer(jsec *s, const char *key, int64_t *out, int required, int64_t lo, int64_t hi) {
    if (*s->err) return;
    cJSON *v = s->obj ? cJSON_GetObjectItemCaseSensitive(s->obj, key) : NULL;
    if (!v) {
        if (required) { *s->err = 1; gs_fail("missing \"%s\" in \"%s\"", key, s->section); }
        return;
    }
    char name[256];
    snprintf(name, sizeof name, "\"%s.%s\"", s->section, key);
    if (gs_json_int(v, name, lo, hi, out) != 0) *s->err = 1;
}

void get_int(jsec *s, const char *key, int *out, int required, int64_t lo, int64_t hi) {
    int64_t x = *out;
    get_integer(s, key, &x, required, lo, hi);
    if (!*s->err) *out = (int)x;
}

void get_long(jsec *s, const char *key, long *out, int required, int64_t lo, int64_t hi) {
    int64_t x = *out;
    get_integer(s, key, &x, required, lo, hi);
    if (!*s->err) *out = (long)x;
}

void get_seed(jsec *s, const char *key, uint64_t *out) {
    int64_t x = (int64_t)*out;
    get_integer(s, key, &x, 0, 0, (int64_t)1 << 53);
    if (!*s->err) *out = (uint64_t)x;
}

void get_bool(jsec *s, const char *key, int *out) {
    cJSON *v = s->obj ? cJSON_GetObjectItemCaseSensitive(s->obj, key) : NULL;
    if (!v || *s->err) return;
    if (!cJSON_IsBool(v)) { *s->err = 1; gs_fail("\"%s.%s\" must be true or false", s->section, key); return; }
    *out = cJSON_IsTrue(v);
}

/* a path relative to the config file's directory */
void get_path(jsec *s, const char *key, char *out, int required, const char *base) {
    cJSON *v = s->obj ? cJSON_GetObjectItemCaseSensitive(s->obj, key) : NULL;
    if (*s->err) return;
    if (!v) {
        if (required) { *s->err = 1; gs_fail("missing \"%s\" in \"%s\"", key, s->section); }
        return;
    }
    if (!cJSON_IsString(v) || !v->valuestring[0]) { *s->err = 1; gs_fail("\"%s.%s\" must be a path", s->section, key); return; }
    const char *p = v->valuestring;
    int n = p[0] == '/' || !base[0] ? snprintf(out, TRAIN_PATH_MAX, "%s", p) : snprintf(out, TRAIN_PATH_MAX, "%s/%s", base, p);
    if (n >= TRAIN_PATH_MAX) { *s->err = 1; gs_fail("\"%s.%s\" is too long", s->section, key); }
}

char *train_read_config(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { gs_fail("cannot open %s: %s", path, strerror(errno)); return NULL; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n < 0 || n > (64L << 20)) { fclose(f); gs_fail("%s: not a config file (%ld bytes)", path, n); return NULL; }
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); fclose(f); gs_fail("cannot read %s", path); return NULL; }
    buf[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return buf;
}

void train_config_dir(const char *path, char *base, size_t size) {
    char *real = realpath(path, NULL);
    snprintf(base, size, "%s", real ? real : path);
    free(real);
    char *slash = strrchr(base, '/');
    if (slash == base) base[1] = 0; /* a config in / */
    else if (slash) *slash = 0;
    else if (!getcwd(base, size)) base[0] = 0;
}

cJSON *train_config_parse(const char *path, const char *what) {
    size_t n;
    char *text = train_read_config(path, &n);
    if (!text) return NULL;
    cJSON *root = gs_json_parse_strict(text, n, path);
    free(text);
    if (!root) return NULL;
    if (cJSON_IsObject(root)) return root;
    cJSON_Delete(root);
    gs_fail("%s: not a JSON object (%s)", path, what);
    return NULL;
}

int train_config_seq_len(const char *model_path) {
    char dir[4096], cfg[4200], file[4200];
    /* a model folder stands for its model.safetensors, whose folder holds the config */
    if (!(model_path = gs_model_file(model_path, file, sizeof file))) { gs_clear_error(); return 0; }
    train_config_dir(model_path, dir, sizeof dir);
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    struct stat sb;
    if (stat(cfg, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
    cJSON *root = train_config_parse(cfg, "a training config");
    if (!root) { gs_clear_error(); return 0; }
    const cJSON *len = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "data"), "seq_len");
    int n = cJSON_IsNumber(len) && len->valuedouble >= 1 && len->valuedouble <= 1e9 ? (int)len->valuedouble : 0;
    cJSON_Delete(root);
    return n;
}
