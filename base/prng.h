/* splitmix64: one 64-bit step of Steele, Lea and Flood's generator, for
 * seeding and for small seeded draws (corpus sampling, initialisation). */
#ifndef GS_BASE_PRNG_H
#define GS_BASE_PRNG_H

#include <stdint.h>

static inline uint64_t gs_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif
