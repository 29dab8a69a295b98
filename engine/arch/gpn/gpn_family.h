/* The GPN and GPN+M rows of the family table (engine/arch/family.h). */
#ifndef GS_ENGINE_ARCH_GPN_FAMILY_H
#define GS_ENGINE_ARCH_GPN_FAMILY_H

#include "engine/arch/family.h"
#include "engine/arch/gpn/gpn_hooks.h"

extern const gs_family gs_family_gpn, gs_family_gpn_m;

/* Checkpoints (gpn_model.c). */
int gpn_family_recognise(const st_file *f);
int gpn_family_infer(const st_file *f, gs_config *c);
void gpn_family_describe(const st_file *f, const gs_config *c, char *buf, size_t size);
int gpn_family_check_metadata(const st_file *f, const gs_config *c);
int gpn_family_validate(const gs_config *c);
int gpn_family_tensor_specs(const gs_config *c, gs_tensor_spec *s);
void gpn_family_bind(const gs_config *c, float *block, gpn_params *p);
void gpn_family_write_metadata(const gs_config *c, st_writer *w);
int gpn_family_decode(const gs_model *m, const float *s, float *logits);
const float *gpn_family_embedding(const gs_model *m, int *width);

/* The backends (gpn_cpu.c, gpn_cuda_backend.c). */
int gpn_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out);
int gpn_cuda_backend_new(const gs_model *m, int max_batch, const gs_device *dev, const gs_engine_host *host,
                         gs_backend *out);

#endif
