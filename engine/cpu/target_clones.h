/* GS_HOT: a hot loop also built for AVX2 and AVX-512, the clone picked at
 * load time by the CPU it runs on (the build itself targets baseline x86-64,
 * so one binary runs everywhere). GCC on x86-64 with glibc only (the choice
 * is a glibc ifunc), and not under ASan, whose instrumentation does not go
 * through the resolver. No FMA clone: a fused multiply-add rounds
 * differently, and a clone must give the bits the baseline build gives. */
#ifndef GS_ENGINE_TARGET_CLONES_H
#define GS_ENGINE_TARGET_CLONES_H

#include <stdlib.h> /* defines __GLIBC__ under glibc, whose ifuncs pick the clone */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    defined(__GLIBC__)
#define GS_HOT __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define GS_HOT
#endif

#endif
