/* The CUDA step's front door (cuda_engine.h): opens the gpnscope_cuda.so
 * plugin on first use and forwards to it. Looked for in $GPNSCOPE_CUDA_PLUGIN,
 * next to the running executable, then where this build put it. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "engine/cuda/cuda_engine.h"

static const gpn_cuda_api *api;
static char load_error[768];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static const gpn_cuda_api *try_open(const char *path) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(load_error, sizeof load_error, "cannot load the CUDA engine %s: %s", path, dlerror());
        return NULL;
    }
    gpn_cuda_plugin_fn entry = (gpn_cuda_plugin_fn)(uintptr_t)dlsym(lib, "gpn_cuda_plugin");
    const gpn_cuda_api *a = entry ? entry() : NULL;
    if (!a || a->abi != (long)GPN_CUDA_ABI) {
        snprintf(load_error, sizeof load_error, "%s is not the CUDA engine of this gpnscope build (rebuild it)", path);
        dlclose(lib);
        return NULL;
    }
    return a; /* the library stays loaded for the life of the process */
}

static void load(void) {
    const char *env = getenv("GPNSCOPE_CUDA_PLUGIN");
    if (env && *env) {
        api = try_open(env);
        return;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            char path[PATH_MAX + 32];
            snprintf(path, sizeof path, "%.*s/gpnscope_cuda.so", (int)(slash - exe), exe);
            if (access(path, R_OK) == 0 && (api = try_open(path))) return;
        }
    }
#ifdef GPNSCOPE_CUDA_PLUGIN
    api = try_open(GPNSCOPE_CUDA_PLUGIN);
#else
    snprintf(load_error, sizeof load_error,
             "this gpnscope was built without CUDA (no nvcc was found when it was configured; install the CUDA "
             "Toolkit and rebuild, docs/cuda.md)");
#endif
}

static const gpn_cuda_api *plugin(void) {
    pthread_once(&load_once, load);
    return api;
}

int gpn_cuda_usable(char *why, size_t why_size) {
    if (!plugin()) {
        if (why && why_size) snprintf(why, why_size, "%s", load_error);
        return 0;
    }
    return api->usable(why, why_size);
}

gpn_cuda *gpn_cuda_new(const gs_model *m, int max_batch, int device, gs_precision precision) {
    if (!plugin()) {
        gs_fail("--device cuda: %s", load_error);
        return NULL;
    }
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n_specs = gs_tensor_specs(&m->cfg, specs);
    gpn_cuda *g = api->create(m, specs, n_specs, max_batch, device, precision);
    if (!g) gs_fail("%s", api->error());
    return g;
}

void gpn_cuda_free(gpn_cuda *g) {
    if (g && api) api->destroy(g);
}

void gpn_cuda_reset_seq(gpn_cuda *g, int b) { api->reset_seq(g, b); }

int gpn_cuda_step(gpn_cuda *g, const int32_t *tokens, int B, unsigned hook_mask, gpn_cuda_fire_fn fire, void *ctx,
                  int outputs, const unsigned char *rows, gs_step_out *out) {
    if (api->step(g, tokens, B, hook_mask, fire, ctx, outputs, rows, out)) return gs_fail("%s", api->error());
    return 0;
}

const char *gpn_cuda_name(const gpn_cuda *g) { return api->name(g); }
