/* The vector SQL functions on known values, on every kind of wrong input
 * (each error must say what is wrong), and on random bytes (no crash under
 * ASan/UBSan). */
#include <sqlite3.h>

#include "store/vec_sql.h"
#include "testlib.h"

static sqlite3 *db;

/* The first column of the first row as text ("NULL" for NULL), or the error
 * message prefixed with "ERROR: ". */
static const char *q(const char *sql) {
    static char out[8][4096];
    static int slot;
    char *o = out[slot++ % 8];
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
        snprintf(o, 4096, "ERROR: %s", sqlite3_errmsg(db));
        return o;
    }
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        if (sqlite3_column_type(s, 0) == SQLITE_NULL) snprintf(o, 4096, "NULL");
        else snprintf(o, 4096, "%s", (const char *)sqlite3_column_text(s, 0));
    } else if (rc == SQLITE_DONE) {
        snprintf(o, 4096, "NO ROW");
    } else {
        snprintf(o, 4096, "ERROR: %s", sqlite3_errmsg(db));
    }
    sqlite3_finalize(s);
    return o;
}

static double qd(const char *sql) {
    const char *r = q(sql);
    if (!strncmp(r, "ERROR", 5) || !strcmp(r, "NULL")) {
        fprintf(stderr, "  %s -> %s\n", sql, r);
        return NAN;
    }
    return atof(r);
}

#define EQ(sql, want) do { const char *got_ = q(sql); CHECK(!strcmp(got_, want), "%s -> '%s', want '%s'", sql, got_, want); } while (0)
#define NEAR(sql, want) do { double got_ = qd(sql); CHECK(fabs(got_ - (want)) < 1e-6, "%s -> %.9g, want %.9g", sql, got_, (double)(want)); } while (0)
/* An error whose message contains `part`. */
#define ERR(sql, part) do { const char *got_ = q(sql); CHECK(!strncmp(got_, "ERROR", 5) && strstr(got_, part), "%s -> '%s', want an error containing '%s'", sql, got_, part); } while (0)

static void test_parsing(void) {
    EQ("SELECT vec_length('[1, 2, 3]')", "3");
    EQ("SELECT vec_length('  [ 1 , -2.5e-3 ,3E2 ]  ')", "3");
    EQ("SELECT vec_length(x'0000803f00000040')", "2");
    EQ("SELECT vec_length(NULL)", "NULL");
    EQ("SELECT vec_length(zeroblob(4000000))", "1000000");
    ERR("SELECT vec_length(x'010203')", "BLOB of 3 bytes is not a float32 vector (its length must be a multiple of 4");
    ERR("SELECT vec_length(zeroblob(0))", "BLOB is empty");
    ERR("SELECT vec_length('[]')", "JSON array is empty");
    ERR("SELECT vec_length('')", "not a JSON array");
    ERR("SELECT vec_length('[1,]')", "expected a number at offset 3");
    ERR("SELECT vec_length('[1 2]')", "expected ',' or ']'");
    ERR("SELECT vec_length('[1] x')", "unexpected text after the JSON array");
    ERR("SELECT vec_length('[1')", "expected ',' or ']'");
    ERR("SELECT vec_length('[nan]')", "expected a number");
    ERR("SELECT vec_length('[Infinity]')", "expected a number");
    ERR("SELECT vec_length('[0x10]')", "expected ',' or ']'");
    ERR("SELECT vec_length('[1.]')", "digits must follow '.'");
    ERR("SELECT vec_length('[1e]')", "digits must follow the exponent");
    ERR("SELECT vec_length('[1e39]')", "element 0 (1e39) is out of float32 range");
    ERR("SELECT vec_length('[-1e400]')", "out of float32 range");
    ERR("SELECT vec_length('[3.4028236e38]')", "out of float32 range");
    EQ("SELECT vec_to_json('[-3.4028235e38]')", "[-3.4028235e+38]");
    ERR("SELECT vec_length(5)", "expected a vector (a float32 BLOB or a JSON array), got INTEGER");
    ERR("SELECT vec_length(2.5)", "got REAL");
    ERR("SELECT vec_length('{\"a\":1}')", "not a JSON array");
    EQ("SELECT vec_length('[1e-60]')", "1"); /* underflows to 0: fine */
    ERR("SELECT vec_length('[' || printf('%.400f', 1) || ']')", "longer than");
    ERR("SELECT vec_length()", "wrong number of arguments");
    /* the function name starts every message */
    ERR("SELECT vec_norm(x'00')", "vec_norm: ");
}

static void test_conversions(void) {
    EQ("SELECT vec_to_json(vec_f32('[1.5, -2, 0.1, 0]'))", "[1.5,-2,0.1,0]");
    EQ("SELECT vec_to_json('[16777216, 1e-7, 3.4028235e38]')", "[16777216,1e-07,3.4028235e+38]");
    EQ("SELECT hex(vec_f32('[1, 2]'))", "0000803F00000040");
    EQ("SELECT hex(vec_f32(x'0000803f'))", "0000803F");
    EQ("SELECT vec_to_json(x'0000c07f0000807f000080ff')", "[null,1e999,-1e999]");
    EQ("SELECT json_array_length(vec_to_json('[1,2,3]'))", "3");
    /* float16: 1.0 = 0x3c00, -2.0 = 0xc000, 65504 = 0x7bff, smallest subnormal 0x0001 */
    EQ("SELECT vec_to_json(vec_f32(x'003c00c0ff7b0100', 'f16'))", "[1,-2,65504,5.9604645e-08]");
    EQ("SELECT hex(vec_f32(vec_f32('[1]'), 'f32'))", "0000803F");
    EQ("SELECT vec_f32(NULL, 'f16')", "NULL");
    ERR("SELECT vec_f32(x'003c00', 'f16')", "BLOB of 3 bytes is not a float16 vector (its length must be a multiple of 2)");
    ERR("SELECT vec_f32(x'003c', 'f32')", "multiple of 4");
    ERR("SELECT vec_f32(x'003c', 'f64')", "dtype must be 'f32' or 'f16', got 'f64'");
    ERR("SELECT vec_f32(x'003c', NULL)", "dtype must be 'f32' or 'f16', got NULL");
    ERR("SELECT vec_f32('[1]', 'f16')", "dtype 'f16' describes a BLOB, got TEXT");
    ERR("SELECT vec_f32(zeroblob(0), 'f16')", "empty");
}

static void test_indexing(void) {
    EQ("SELECT vec_at('[1, 2, 3]', 1)", "2.0");
    EQ("SELECT vec_at('[1, 2, 3]', 2.0)", "3.0");
    EQ("SELECT vec_at('[1, 2, 3]', NULL)", "NULL");
    ERR("SELECT vec_at('[1, 2, 3]', 3)", "index 3 is out of range for a vector of 3 elements (valid: 0..2)");
    ERR("SELECT vec_at('[1, 2, 3]', -1)", "index -1 is out of range");
    ERR("SELECT vec_at('[1, 2, 3]', 9223372036854775807)", "out of range");
    ERR("SELECT vec_at('[1, 2, 3]', 1.5)", "the index must be an integer, got 1.5");
    ERR("SELECT vec_at('[1, 2, 3]', 'a')", "the index must be an integer, got TEXT");
    EQ("SELECT vec_to_json(vec_slice('[1, 2, 3, 4]', 1, 3))", "[2,3]");
    EQ("SELECT vec_to_json(vec_slice('[1, 2, 3, 4]', 0, 4))", "[1,2,3,4]");
    EQ("SELECT vec_slice('[1, 2]', NULL, 1)", "NULL");
    ERR("SELECT vec_slice('[1, 2, 3, 4]', 3, 1)", "start index 3 is greater than end index 1");
    ERR("SELECT vec_slice('[1, 2, 3, 4]', 1, 5)", "end index 5 is out of range for a vector of 4 elements");
    ERR("SELECT vec_slice('[1, 2, 3, 4]', 2, 2)", "the slice would be empty");
    ERR("SELECT vec_slice('[1, 2, 3, 4]', -1, 2)", "start index -1 is negative");
    ERR("SELECT vec_slice('[1, 2, 3, 4]', 0, -2)", "end index -2 is negative");
    ERR("SELECT vec_slice('[1, 2, 3, 4]', 0, 4294967298)", "out of range");
}

static void test_arithmetic(void) {
    NEAR("SELECT vec_dot('[1, 2, 3]', '[4, 5, 6]')", 32);
    NEAR("SELECT vec_norm('[3, 4]')", 5);
    NEAR("SELECT vec_cosine('[1, 0]', '[1, 1]')", 1 / sqrt(2));
    NEAR("SELECT vec_distance_cosine('[1, 0]', '[1, 1]')", 1 - 1 / sqrt(2));
    NEAR("SELECT vec_distance_cosine('[1, 2, 3]', '[2, 4, 6]')", 0);
    NEAR("SELECT vec_distance_cosine('[1, 0]', '[-1, 0]')", 2);
    NEAR("SELECT vec_distance_l2('[1, 2]', '[4, 6]')", 5);
    NEAR("SELECT vec_project('[3, 4]', '[1, 0]')", 3);
    NEAR("SELECT vec_project('[3, 4]', '[0, 2]')", 4);
    NEAR("SELECT vec_project('[3, 4]', '[0, -5]')", -4);
    EQ("SELECT vec_cosine('[0, 0]', '[1, 1]')", "NULL");
    EQ("SELECT vec_distance_cosine('[1, 1]', '[0, 0]')", "NULL");
    EQ("SELECT vec_project('[3, 4]', '[0, 0]')", "NULL");
    EQ("SELECT vec_dot(NULL, '[1]')", "NULL");
    EQ("SELECT vec_dot('[1]', NULL)", "NULL");
    EQ("SELECT vec_norm(x'0000c07f')", "NULL"); /* NaN norm is NULL */
    ERR("SELECT vec_dot('[1, 2, 3]', '[1, 2]')", "the vectors have different lengths (3 and 2)");
    ERR("SELECT vec_distance_l2('[1]', x'01')", "2nd vector: a BLOB of 1 bytes");
    ERR("SELECT vec_cosine('x', '[1]')", "1st vector: ");
    EQ("SELECT vec_to_json(vec_add('[1, 2]', '[10, 20]'))", "[11,22]");
    EQ("SELECT vec_to_json(vec_sub('[1, 2]', '[10, 20]'))", "[-9,-18]");
    ERR("SELECT vec_add('[1, 2]', '[1]')", "different lengths (2 and 1)");
    EQ("SELECT vec_to_json(vec_add('[3e38]', '[3e38]'))", "[1e999]"); /* overflow is +inf, not UB */
    EQ("SELECT vec_to_json(vec_scale('[1, -2]', 2.5))", "[2.5,-5]");
    EQ("SELECT vec_to_json(vec_scale('[1, -2]', 3))", "[3,-6]");
    EQ("SELECT vec_to_json(vec_scale('[3e38]', 1e300))", "[1e999]");
    EQ("SELECT vec_scale('[1]', NULL)", "NULL");
    ERR("SELECT vec_scale('[1]', 'x')", "the factor must be a number, got TEXT");
    EQ("SELECT vec_to_json(vec_normalize('[3, 4]'))", "[0.6,0.8]");
    EQ("SELECT vec_normalize('[0, 0]')", "NULL");
    NEAR("SELECT vec_norm(vec_normalize('[1e-30, 2e-30]'))", 1);
    NEAR("SELECT vec_norm(vec_normalize('[3e38, 3e38]'))", 1);
}

static void test_avg(void) {
    sqlite3_exec(db, "CREATE TABLE v(i INTEGER, g INTEGER, x); INSERT INTO v VALUES"
                     " (1, 1, '[1, 10]'), (2, 1, vec_f32('[3, 20]')), (3, 1, NULL), (4, 2, '[5, 30]')",
                 NULL, NULL, NULL);
    EQ("SELECT vec_to_json(vec_avg(x)) FROM v", "[3,20]");
    EQ("SELECT vec_to_json(vec_avg(x)) FROM v WHERE g = 1", "[2,15]");
    EQ("SELECT vec_avg(x) FROM v WHERE i > 100", "NULL");
    EQ("SELECT vec_avg(x) FROM v WHERE x IS NULL", "NULL");
    EQ("SELECT group_concat(j, ' ') FROM (SELECT vec_to_json(vec_avg(x)) AS j FROM v GROUP BY g ORDER BY g)", "[2,15] [5,30]");
    /* as a window function: the running mean, and a sliding frame (xInverse) */
    EQ("SELECT group_concat(j, ' ') FROM (SELECT vec_to_json(vec_avg(x) OVER (ORDER BY i)) AS j FROM v ORDER BY i)",
       "[1,10] [2,15] [2,15] [3,20]");
    EQ("SELECT group_concat(j, ' ') FROM (SELECT vec_to_json(vec_avg(x) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND "
       "CURRENT ROW)) AS j FROM v ORDER BY i)",
       "[1,10] [2,15] [3,20] [5,30]");
    sqlite3_exec(db, "INSERT INTO v VALUES (5, 3, '[1, 2, 3]')", NULL, NULL, NULL);
    ERR("SELECT vec_avg(x) FROM v", "vec_avg: the vectors have different lengths (2 and 3)");
    ERR("SELECT vec_avg(x) FROM (SELECT 'oops' AS x)", "vec_avg: TEXT is not a JSON array");
}

/* Random bytes and random near-JSON text into every function: only errors,
 * NULLs or values may come out. */
static void test_hostile(void) {
    const char *calls[] = {"vec_length(?1)", "vec_to_json(?1)", "vec_f32(?1)", "vec_f32(?1, 'f16')", "vec_at(?1, ?2)",
                           "vec_slice(?1, ?2, ?3)", "vec_dot(?1, ?1)", "vec_norm(?1)", "vec_cosine(?1, ?1)",
                           "vec_distance_cosine(?1, ?1)", "vec_distance_l2(?1, ?1)", "vec_add(?1, ?1)",
                           "vec_sub(?1, ?1)", "vec_scale(?1, ?2)", "vec_normalize(?1)", "vec_project(?1, ?1)",
                           "vec_at(?1, 0)"};
    const char alphabet[] = "[],-+.eE0123456789 \t\n\"nul";
    unsigned seed = 12345;
    int ran = 0;
    for (int iter = 0; iter < 3000; iter++) {
        seed = seed * 1103515245u + 12345u;
        int len = (int)((seed >> 16) % 40);
        unsigned char buf[64];
        int as_text = iter % 2;
        for (int i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = as_text ? (unsigned char)alphabet[(seed >> 16) % (sizeof alphabet - 1)] : (unsigned char)(seed >> 16);
        }
        if (as_text && len > 0) buf[0] = '[';
        const char *call = calls[iter % (sizeof calls / sizeof *calls)];
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT %s", call);
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) continue;
        if (as_text) sqlite3_bind_text(s, 1, (const char *)buf, len, SQLITE_TRANSIENT);
        else sqlite3_bind_blob(s, 1, buf, len, SQLITE_TRANSIENT);
        if (sqlite3_bind_parameter_count(s) >= 2) sqlite3_bind_int64(s, 2, (int64_t)(seed % 7) - 2);
        if (sqlite3_bind_parameter_count(s) >= 3) sqlite3_bind_int64(s, 3, (int64_t)(seed % 11));
        int rc = sqlite3_step(s);
        ran += rc == SQLITE_ROW || rc == SQLITE_ERROR;
        sqlite3_finalize(s);
    }
    CHECK(ran == 3000, "every hostile call returned a row or an error (%d of 3000)", ran);
}

int main(void) {
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) return 1;
    CHECK(store_register_vec_functions(db) == SQLITE_OK, "register");
    test_parsing();
    test_conversions();
    test_indexing();
    test_arithmetic();
    test_avg();
    test_hostile();
    sqlite3_close(db);
    return test_summary();
}
