/* The output path most families share, for their decode entry: logits =
 * rms(s, w, eps) W^T with W the output head stored [V, d] (a tied embedding
 * or an untied lm_head). w NULL: no norm (Elman decodes its state as it is). */
#ifndef GS_ENGINE_ARCH_DECODE_H
#define GS_ENGINE_ARCH_DECODE_H

int gs_decode_rms_head(const float *s, const float *w, float eps, int d, const float *head, int V, float *logits);

#endif
