/* The JSON config readers `gpnscope train` shares between its trainers
 * (train.c's corpus trainer, task_train.c's task trainer): sections whose
 * unknown keys are errors, typed getters with ranges that set the first
 * error once, paths relative to the config file's directory. */
#ifndef GS_TRAIN_CONFIG_JSON_H
#define GS_TRAIN_CONFIG_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *section;
    cJSON *obj;
    int *err; /* shared by all sections: the first error is the one reported */
} jsec;

/* Every key of a section must be one of known (NULL-terminated); 0 or -1. */
int check_keys(cJSON *obj, const char *section, const char *const *known);
/* The key's number in [lo, hi] into *out (absent: unchanged, unless required). */
int get_num(jsec *s, const char *key, double *out, int required, double lo, double hi);
/* An integer in [lo, hi] (within +-2^53), checked before it is converted. */
void get_int(jsec *s, const char *key, int *out, int required, int64_t lo, int64_t hi);
void get_long(jsec *s, const char *key, long *out, int required, int64_t lo, int64_t hi);
void get_bool(jsec *s, const char *key, int *out);
/* A seed: an integer in [0, 2^53] (every such integer is exact in the JSON's double). */
void get_seed(jsec *s, const char *key, uint64_t *out);
/* A path (TRAIN_PATH_MAX bytes) relative to base unless absolute. */
void get_path(jsec *s, const char *key, char *out, int required, const char *base);
/* The config file's text (malloc'd, NUL-terminated, *len bytes before the
 * terminator), or NULL with gs_error(). */
char *train_read_config(const char *path, size_t *len);
/* The config file's JSON object, parsed strictly (base/json.h; cJSON_Delete
 * it), or NULL with gs_error() "PATH: not a JSON object (WHAT)" or the
 * strict parser's one line. */
cJSON *train_config_parse(const char *path, const char *what);
/* The directory of the config file at path, absolute where it can be (size bytes). */
void train_config_dir(const char *path, char *base, size_t size);
/* data.seq_len of DIR/config.json beside the checkpoint DIR/model.safetensors
 * (written by `gpnscope train`): the windows the model was trained on; 0 when
 * there is no such file or it names none. */
int train_config_seq_len(const char *model_path);

#endif
