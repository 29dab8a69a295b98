/* What the api/ files share: the handles behind api/gpnscope.h's names. */
#ifndef GS_API_INTERNAL_H
#define GS_API_INTERNAL_H

#include "api/gpnscope.h"
#include "engine/arch/family.h"
#include "engine/engine.h"
#include "engine/model.h"

#define GS_API_NAME_MAX 96

struct gs_api_model {
    gs_model *m;
    const gs_family *f;
    char *config;        /* JSON */
    gs_api_site *sites;  /* every site, per-layer ones per layer */
    int n_sites;
    char *names;         /* n_sites names of GS_API_NAME_MAX bytes */
    gs_engine *engine;  /* the last run's, kept for the next run of the same batch */
};

#endif
