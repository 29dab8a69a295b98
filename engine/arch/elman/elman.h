/* A toy family: the Elman RNN, s_t = tanh(W s_{t-1} + U E[x_t] + b), decoded
 * through the tied embedding, logits_t = E s_{t-1} (the state before x_t
 * predicts x_t, as in GPN). W and U are stored [out, in] (PyTorch's layout).
 * It is the smallest complete family: the proof that one folder and one row
 * of the family table (engine/arch/families.c) add an architecture
 * (docs/architecture.md, "Adding a family"). */
#ifndef GS_ENGINE_ARCH_ELMAN_H
#define GS_ENGINE_ARCH_ELMAN_H

#include "engine/arch/family.h"
#include "engine/arch/tensor_table.h"

extern const gs_family gs_family_elman;

/* The tensors, in checkpoint order (elman_tensors, elman_family.c). */
typedef enum { ELMAN_EMBED, ELMAN_W, ELMAN_U, ELMAN_B, ELMAN_N_TENSORS } elman_tensor;
extern const gs_tensor_table elman_tensors;

int elman_cpu_new(const gs_model *m, int max_batch, const gs_engine_host *host, gs_backend *out);

#endif
