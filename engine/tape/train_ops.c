/* The training ops of train_ops.h, compiled from one source (train_ops.inc)
 * for float (training) and double (gradient checks). */
#include "engine/tape/train_ops.h"

#include <cblas.h>
#include <math.h>

#include "engine/tape/tape_kernels.h"

#include "engine/tape/real_f32.h"
#include "engine/tape/tape_helpers.inc"
#include "engine/tape/train_ops.inc"
#include "engine/tape/real_end.h"

#include "engine/tape/real_f64.h"
#include "engine/tape/tape_helpers.inc"
#include "engine/tape/train_ops.inc"
#include "engine/tape/real_end.h"
