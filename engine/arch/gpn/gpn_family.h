/* The GPN and GPN+M rows of the family table (engine/arch/family.h). */
#ifndef GS_ENGINE_ARCH_GPN_FAMILY_H
#define GS_ENGINE_ARCH_GPN_FAMILY_H

#include "engine/arch/family.h"

extern const gs_family gs_family_gpn, gs_family_gpn_m;

/* The backends (gpn_cpu.c, gpn_cuda_backend.c). */
int gpn_cpu_new(const gpn_model *m, int max_batch, const gs_engine_host *host, gs_backend *out);
int gpn_cuda_backend_new(const gpn_model *m, int max_batch, const gpn_device *dev, const gs_engine_host *host,
                         gs_backend *out);

#endif
