/* gpnscope convert checkpoint.pkl out.safetensors: runs tools/convert_checkpoint.py
 * (standard library + numpy, restricted unpickler) with the system python, then
 * loads the result with the engine's own reader to prove it is a valid model. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "cli/commands.h"
#include "engine/model.h"

static const char *help =
    "usage: gpnscope convert CHECKPOINT.pkl OUT.safetensors [--dtype keep|f32|bf16]\n\n"
    "Convert a checkpoint written by the paper's companion code (a pickle of\n"
    "{step, data_position, params, opt_state}) into safetensors with the inferred\n"
    "config in __metadata__. The pickle is read by a restricted unpickler: numpy\n"
    "arrays and plain containers only; optimizer objects are skipped; a pickle that\n"
    "references anything else (os.system, eval, ...) is refused and nothing runs.\n\n"
    "  --dtype keep|f32|bf16   output dtype (default keep: as stored)\n\n"
    "Environment: GPNSCOPE_PYTHON (default /usr/bin/python3, needs numpy),\n"
    "GPNSCOPE_TOOLS (folder of convert_checkpoint.py; default the source tree's tools/).\n";

int cmd_convert(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { fputs(help, stdout); return 0; }
    int positional = 0;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dtype")) { i++; continue; }
        if (!strncmp(argv[i], "--", 2)) continue;
        if (++positional == 2) out = argv[i];
    }
    if (positional != 2) { fputs(help, stderr); return 2; }
    const char *py = getenv("GPNSCOPE_PYTHON");
    if (!py || !*py) py = "/usr/bin/python3";
    const char *tools = getenv("GPNSCOPE_TOOLS");
    char script[4096];
    snprintf(script, sizeof script, "%s/convert_checkpoint.py", tools && *tools ? tools : GPNSCOPE_SOURCE_DIR "/tools");
    if (access(script, R_OK) != 0) {
        fprintf(stderr, "gpnscope convert: cannot find %s (set GPNSCOPE_TOOLS)\n", script);
        return 1;
    }
    char **args = calloc((size_t)argc + 3, sizeof *args);
    args[0] = (char *)py;
    args[1] = script;
    for (int i = 1; i < argc; i++) args[i + 1] = argv[i];
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execv(py, args);
        fprintf(stderr, "gpnscope convert: cannot run %s: %s (install python3-numpy or set GPNSCOPE_PYTHON)\n", py, strerror(errno));
        _exit(127);
    }
    free(args);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) { fprintf(stderr, "gpnscope convert: cannot start %s\n", py); return 1; }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return WIFEXITED(status) && WEXITSTATUS(status) == 2 ? 2 : 1;
    gpn_model *m = gpn_model_load(out);
    if (!m) { fprintf(stderr, "gpnscope convert: the output does not load: %s\n", gs_error()); return 1; }
    gpn_model_free(m);
    return 0;
}
