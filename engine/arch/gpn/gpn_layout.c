#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "engine/arch/family.h"
#include "engine/arch/gpn/gpn_train.h"

static size_t find(const gs_tensor_spec *s, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(s[i].name, name) == 0) return s[i].offset;
    return TRAIN_NONE;
}

static void add_seg(train_set *set, size_t K, size_t norm, size_t bias, int n) {
    train_segment *g = &set->seg[set->n_seg++];
    g->K = K;
    g->norm = norm;
    g->bias = bias;
    g->col = set->width;
    g->n = n;
    set->width += n;
}

int train_layout_init(train_layout *L, const gs_config *c) {
    if (gs_config_validate(c) != 0) return -1;
    memset(L, 0, sizeof *L);
    L->c = *c;
    gs_tensor_spec specs[GS_MAX_TENSORS];
    int n = gs_tensor_specs(c, specs);
    L->n_params = specs[n - 1].offset + specs[n - 1].numel;
#define TOP(f) L->f = find(specs, n, #f)
    TOP(embedding); TOP(decode_norm_w); TOP(decode_proj_k); TOP(decode_bias); TOP(fuse_norm_w); TOP(fuse_proj_k);
    TOP(fg_norm_w); TOP(fg_gate_k); TOP(fg_gate_b); TOP(write_norm_w); TOP(write_W_k_k); TOP(write_W_k_b);
    TOP(write_W_v_k); TOP(write_W_beta_k); TOP(write_A_log); TOP(write_dt_bias); TOP(write_W_a_k);
#undef TOP
    int mem = gs_family_has_memory(c); /* GPN+M: the memory's write and reads */
    for (int i = 0; i < c->n_layers; i++) {
        char pre[16] = "";
        if (mem) snprintf(pre, sizeof pre, "L%d_", i);
        char name[64];
        train_layer_offsets *o = &L->L[i];
#define LAY(f, suffix) (snprintf(name, sizeof name, "%s%s", pre, suffix), o->f = find(specs, n, name))
        LAY(ffn_norm_w, "ffn_norm_w"); LAY(ffn_w1, "ffn_w1_k"); LAY(ffn_w2, "ffn_w2_k"); LAY(pg_norm_w, "pg_norm_w");
        LAY(pg_gate_k, "pg_gate_k"); LAY(pg_gate_b, "pg_gate_b"); LAY(read_norm_w, "read_norm_w");
        LAY(read_W_q_k, "read_W_q_k"); LAY(read_W_q_b, "read_W_q_b"); LAY(read_W_gate_k, "read_W_gate_k");
        LAY(read_out_norm_w, "read_out_norm_w"); LAY(read_W_o_k, "read_W_o_k");
#undef LAY
    }
    int d = c->d, f = c->f, H = c->H, hk = c->H * c->dk, hv = c->H * c->dv;
    L->n_sets = c->n_layers + 1;
    if (mem) {
        /* next step's key first: its columns are skipped when truncated BPTT stops the gradient into prev */
        train_set *s0 = &L->set[0];
        L->c_kn = 0;
        add_seg(s0, L->write_W_k_k, L->write_norm_w, L->write_W_k_b, hk);
        L->c_v = s0->width;
        add_seg(s0, L->write_W_v_k, L->write_norm_w, TRAIN_NONE, hv);
        L->c_beta = s0->width;
        add_seg(s0, L->write_W_beta_k, L->write_norm_w, TRAIN_NONE, H);
        L->c_a = s0->width;
        add_seg(s0, L->write_W_a_k, L->write_norm_w, TRAIN_NONE, H);
    }
    for (int i = 0; i < c->n_layers; i++) {
        train_set *s = &L->set[i];
        const train_layer_offsets *o = &L->L[i];
        L->lbase[i] = s->width;
        if (mem) {
            add_seg(s, o->read_W_q_k, o->read_norm_w, o->read_W_q_b, hk);
            add_seg(s, o->read_W_gate_k, o->read_norm_w, TRAIN_NONE, hv);
        }
        add_seg(s, o->ffn_w1, o->ffn_norm_w, TRAIN_NONE, 2 * f);
        add_seg(s, o->pg_gate_k, o->pg_norm_w, o->pg_gate_b, d);
    }
    L->c_q = 0;
    L->c_gr = mem ? hk : 0;
    L->c_u = mem ? hk + hv : 0;
    L->c_pg = L->c_u + 2 * f;
    add_seg(&L->set[c->n_layers], L->fg_gate_k, L->fg_norm_w, L->fg_gate_b, d);
    L->zw = f + (mem ? hv : 0);
    return 0;
}
