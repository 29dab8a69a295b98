/* Named hook points, capture sets and interventions on top of the engine's
 * hooks (engine/hooks.h). A probe set attaches to one engine; handlers are
 * registered by hook name ("s_pred", "L0.mem_read", "mem.alpha", ...), several
 * per point, run in registration order. Capturing and intervening are the same
 * mechanism: a handler sees the batch tensor and may change it. */
#ifndef GS_PROBES_PROBES_H
#define GS_PROBES_PROBES_H

#include "engine/arch/family.h"
#include "engine/engine.h"

typedef struct probe_set probe_set;
typedef void (*probe_fn)(void *ctx, const gs_hook_event *ev);

/* Parse a site name of the model's family (engine/arch/family.h,
 * docs/hooks.md): "state.pred", "mem.alpha", "blocks.1.hook_mlp_out", or an
 * alias ("s_pred", "L1.ffn_out"). Per-layer names need a layer i < n_layers;
 * "*" in its place matches every layer (layer = -1); a one-layer model may
 * leave the layer out ("mem_read"). */
int probe_parse_site(const gs_config *c, const char *name, const gs_site **site, int *layer);
int probe_parse_name(const gs_config *c, const char *name, gs_hook_point *point, int *layer);
/* Every site of a model by its name (layers spelled out), one per line into buf. */
int probe_list_names(const gs_config *c, char *buf, size_t size);
/* Width of a hook point's rows for a model. */
int probe_width(const gs_config *c, gs_hook_point p);

probe_set *probe_set_new(gs_engine *e);
void probe_set_free(probe_set *s); /* detaches every handler from the engine */
int probe_add(probe_set *s, const char *name, probe_fn fn, void *ctx);

/* Capture: after each step, `data` holds the B x width tensor of the point. */
typedef struct {
    int width, B;
    float *data; /* max_batch x width */
    int layer;
} probe_capture;
probe_capture *probe_capture_add(probe_set *s, const char *name);
/* The same for a site already parsed (probes/site_ref.h): one layer of it. */
probe_capture *probe_capture_site(probe_set *s, const gs_site *site, int layer);

/* Interventions. Heads: zero the memory read of the given heads in `layer`
 * (-1: every layer). Direction: at hook `name` (a d-wide state such as s_pred
 * for carry scope or s_decode for decode-only scope) subtract v, or remove the
 * component along v's direction. */
int probe_zero_heads(probe_set *s, int layer, const int *heads, int n_heads);
/* The same heads zeroed after the read's joint output RMSNorm instead of
 * before it: the surviving heads keep the scale they have in the unablated
 * model (before the norm, zeroing heads shrinks rms(o) and the norm scales
 * the survivors up by rms(o) / rms(o without them)). The memory read is
 * linear in the normed heads, so this is the before-norm ablation with the
 * layer's memory contribution (hook mem_read) multiplied by
 * rms(o without them) / rms(o), eps included: exact up to float rounding. */
int probe_zero_heads_after_norm(probe_set *s, int layer, const int *heads, int n_heads);
int probe_subtract(probe_set *s, const char *name, const float *v);
int probe_project_out(probe_set *s, const char *name, const float *v);

#endif
