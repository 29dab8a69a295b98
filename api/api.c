/* The library's errors, version and frees (api/gpnscope.h). */
#include "api/gpnscope.h"

#include <stdlib.h>

#include "base/error.h"

const char *gs_api_last_error(void) { return gs_error(); }

int gs_api_version(void) { return GS_API_VERSION; }

void gs_api_free(void *p) { free(p); }
