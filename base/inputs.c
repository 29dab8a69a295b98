#include "base/inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"

typedef struct {
    dev_t dev;
    ino_t ino;
    char *name;
} input;

static input *inputs;
static int n_inputs, cap_inputs;

int gs_input_add(const char *path) {
    struct stat sb;
    if (!path || stat(path, &sb) != 0) return 0;
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i].dev == sb.st_dev && inputs[i].ino == sb.st_ino) return 0;
    if (n_inputs == cap_inputs) {
        int cap = cap_inputs ? 2 * cap_inputs : 16;
        input *grown = realloc(inputs, (size_t)cap * sizeof *grown);
        if (!grown) return gs_fail("%s: out of memory", path);
        inputs = grown;
        cap_inputs = cap;
    }
    char *name = strdup(path);
    if (!name) return gs_fail("%s: out of memory", path);
    inputs[n_inputs++] = (input){sb.st_dev, sb.st_ino, name};
    return 0;
}

int gs_output_check(const char *path) {
    struct stat sb, now;
    if (!path || stat(path, &sb) != 0 || S_ISDIR(sb.st_mode)) return 0; /* a folder is never replaced by a file */
    for (int i = 0; i < n_inputs; i++) {
        if (inputs[i].dev != sb.st_dev || inputs[i].ino != sb.st_ino) continue;
        /* an input removed since (a -wal its writer deleted) may have lent
         * its inode number to a new file: only a live input counts */
        if (stat(inputs[i].name, &now) != 0 || now.st_dev != sb.st_dev || now.st_ino != sb.st_ino) continue;
        if (!strcmp(path, inputs[i].name))
            return gs_fail("%s is an input of this command: writing there would replace it; choose another output", path);
        return gs_fail("%s is the input %s (the same file): writing there would replace it; choose another output", path,
                       inputs[i].name);
    }
    return 0;
}

void gs_inputs_clear(void) {
    for (int i = 0; i < n_inputs; i++) free(inputs[i].name);
    free(inputs);
    inputs = NULL;
    n_inputs = cap_inputs = 0;
}
