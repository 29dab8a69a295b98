#include "base/inputs.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"

enum { MAX_INPUTS = 32 };

static struct {
    dev_t dev;
    ino_t ino;
    char name[512];
} inputs[MAX_INPUTS];
static int n_inputs;

int gs_input_add(const char *path) {
    struct stat sb;
    if (!path || stat(path, &sb) != 0) return 0;
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i].dev == sb.st_dev && inputs[i].ino == sb.st_ino) return 0;
    if (n_inputs == MAX_INPUTS) return gs_fail("%s: too many input files to keep track of", path);
    inputs[n_inputs].dev = sb.st_dev;
    inputs[n_inputs].ino = sb.st_ino;
    snprintf(inputs[n_inputs].name, sizeof inputs[n_inputs].name, "%s", path);
    n_inputs++;
    return 0;
}

int gs_output_check(const char *path) {
    struct stat sb;
    if (!path || stat(path, &sb) != 0) return 0;
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i].dev == sb.st_dev && inputs[i].ino == sb.st_ino) {
            if (S_ISDIR(sb.st_mode)) continue; /* a folder is never replaced by a file: rename refuses */
            if (!strcmp(path, inputs[i].name))
                return gs_fail("%s is an input of this command: writing there would replace it; choose another output",
                               path);
            return gs_fail("%s is the input %s (the same file): writing there would replace it; choose another output",
                           path, inputs[i].name);
        }
    return 0;
}

void gs_inputs_clear(void) { n_inputs = 0; }
