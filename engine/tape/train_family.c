/* What the baselines' training entries share (train_family.h). */
#include "engine/tape/train_family.h"

#include "engine/tape/train_ops.h"

void train_baseline_derive(gs_config *c) {
    c->e = c->d;
    c->norm_eps = (float)TRAIN_RMS_EPS;
}
