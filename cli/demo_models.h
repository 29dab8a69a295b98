/* The demo's models: the shipped ones that exist in the source tree (GPN+M
 * first, then the baselines of issue 20), or those --model names; and what
 * the demo records of a baseline so that compare can read it. */
#ifndef GS_CLI_DEMO_MODELS_H
#define GS_CLI_DEMO_MODELS_H

#include <stdint.h>
#include <stdio.h>

#define DEMO_MAX_MODELS 8

typedef struct {
    char path[4096];  /* the checkpoint */
    char name[128];   /* "models/gdn-small" for a shipped model, else the path as given */
    int shipped;      /* one of the shipped models: trained on the demo's training text */
    /* a baseline's recording, from its family's table (demo_model_sites) */
    char sites[256];  /* record --sites: the state and decay sites, every layer ("blocks.*.X") */
    char state[96];   /* analyze --site: the state site of the last layer */
    char decay[96];   /* analyze --decay-site, "" when the family has none */
    int64_t run;      /* its run in the demo's store, once recorded */
    /* the window it was trained on: data.seq_len of the config.json that
     * gpnscope train writes beside the checkpoint; 0 when there is none */
    int trained_seq_len;
} demo_model;

/* The shipped models in the demo's order, those whose model.safetensors
 * exists; *n_found of them into m (at most max). Each missing one is named
 * in missing[] (the names, "models/tpp-small"), *n_missing of them. The
 * first (GPN+M) is always listed: the demo checks that it exists. */
void demo_shipped_models(demo_model *m, int max, int *n_found, const char *missing[], int *n_missing);

/* A model given by --model: its path, and whether it is a shipped one. */
void demo_model_from_path(demo_model *m, const char *path);

/* What the shipped models were trained on, in one line, when file (a model
 * file or folder, by any spelling) is one of them (models/gpnm-small too);
 * NULL for any other model. info and the demo say it (issue 38.1). */
const char *demo_shipped_domain(const char *file);

/* Fill sites / state / decay from the model's family table: the family's
 * state-role site and decay-role site, each of every layer. 0, or -1 with
 * gs_error(). */
int demo_model_sites(demo_model *m);

#endif
