/* Vector SQL functions over little-endian float32 BLOBs (sqlite-vec's layout)
 * or JSON arrays: vec_length, vec_to_json, vec_f32, vec_at, vec_slice, vec_dot,
 * vec_norm, vec_cosine, vec_distance_cosine, vec_distance_l2, vec_add,
 * vec_sub, vec_scale, vec_normalize, vec_project and the aggregate (and
 * window) function vec_avg. docs/sql.md documents each one.
 *
 * The same source builds the loadable extension (build/gpnscope_vec.so,
 * entry point sqlite3_gpnscopevec_init) when compiled with GS_VEC_EXTENSION. */
#ifndef GS_STORE_VEC_SQL_H
#define GS_STORE_VEC_SQL_H

struct sqlite3;

/* Register every function on db; returns an SQLite result code. The store
 * calls it on every connection it opens. */
int store_register_vec_functions(struct sqlite3 *db);

#endif
