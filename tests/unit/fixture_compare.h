/* Comparing a run's outputs with a fixture's tensors (the parity tests of
 * every family: test_parity.c, test_family_tpp.c), header-only like testlib.h. */
#ifndef GS_TEST_FIXTURE_COMPARE_H
#define GS_TEST_FIXTURE_COMPARE_H

#include <stdio.h>
#include <stdlib.h>

#include "engine/checkpoint/safetensors.h"
#include "testlib.h"

/* The fixture's tensor `name` as float32 (malloc'd, *n values), or NULL when it lacks it. */
static inline float *fixture_f32(const st_file *f, const char *name, long *n) {
    const st_tensor *t = safetensors_find(f, name);
    if (!t) return NULL;
    float *x = malloc((size_t)t->numel * 4);
    if (!x) return NULL;
    st_tensor_to_f32(t, x);
    *n = (long)t->numel;
    return x;
}

/* got against the fixture's `name`: its relative error printed after `label`, and CHECKed below tol.
 * n_got: the values got holds (the fixture must hold as many), or -1 for the fixture's count. */
static inline void compare_fixture(const char *label, const st_file *ex, const char *name, const float *got, long n_got,
                                   double tol) {
    long n = 0;
    float *want = fixture_f32(ex, name, &n);
    CHECK(want && (n_got < 0 || n == n_got), "%s: the fixture lacks %s of %ld values (it has %ld)", label, name, n_got, n);
    if (want && (n_got < 0 || n == n_got)) {
        double err = rel_err(got, want, n);
        printf("  %-12s %-14s rel err %.2e (tolerance %.0e)\n", label, name, err, tol);
        CHECK(err < tol, "%s %s: relative error %.3e >= %.0e", label, name, err, tol);
    }
    free(want);
}

#endif
