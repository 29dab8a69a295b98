/* Fuzz target: the vector SQL functions (store/vec_sql.c: inside every
 * store, and the loadable extension gpnscope_vec.so), fed arbitrary BLOBs,
 * integers, reals, texts and NULLs. The input format is in fuzz_vec.h. An
 * SQL error is the expected answer to a bad argument; a crash, a leak or a
 * broken invariant (a vector result that is not whole float32s, a JSON round
 * trip that changes a finite vector) is a finding. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_vec.h"
#include "store/vec_sql.h"

static sqlite3 *db;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!db) {
        if (sqlite3_open(":memory:", &db) != SQLITE_OK || store_register_vec_functions(db) != SQLITE_OK) abort();
    }
    fuzz_vec_run(db, data, size);
    return 0;
}
