/* Strict JSON (base/json.h): text after the value, a NUL in a key or a
 * string, and numbers that read as infinity are refused in one line naming
 * the offset, the key or the path; the integer and real readers refuse
 * 1e300, 2^63, 1e20 and 2^31 (for int32 ranges) by their name before any
 * cast, so the ASan/UBSan build runs this without a report. */
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "testlib.h"

static void refused(const char *text, const char *needle) {
    gs_clear_error();
    cJSON *j = gs_json_parse_strict(text, strlen(text), "x.json");
    CHECK(j == NULL, "'%s' accepted", text);
    cJSON_Delete(j);
    CHECK(strstr(gs_error(), needle) && !strchr(gs_error(), '\n') && !strncmp(gs_error(), "x.json: ", 8),
          "'%s': message '%s' lacks '%s'", text, gs_error(), needle);
}

static void accepted(const char *text, size_t len) {
    cJSON *j = gs_json_parse_strict(text, len, "x.json");
    CHECK(j != NULL, "'%s' refused: %s", text, gs_error());
    cJSON_Delete(j);
}

static void test_parse(void) {
    refused("{\"n_heads\": 2} junk", "text after the JSON value, at byte 15");
    refused("{\"n_heads\": 2}{}", "at byte 14");
    refused("{\"n_heads\\u0000x\": 2}", "the key \"n_heads\\u0000x\" holds a NUL (U+0000) at byte 9");
    refused("{\"prompt\": \"a\\u0000b\"}", "the string \"a\\u0000b\" holds a NUL");
    refused("{\"n_heads\": 1e999}", "\"n_heads\" is a number too large for a double");
    refused("{\"a\": [1, {\"b\": -1e999}]}", "\"a\"[1].\"b\" is a number too large");
    /* a key twice in one object: readers would take the first (found by fuzz_config_json) */
    refused("{\"data\": {\"seq_len\": 1}, \"data\": {\"seq_len\": 2}}", "the key \"data\" appears twice in one object");
    refused("{\"a\": [{\"x\": 1, \"y\": 2, \"x\": 3}]}", "the key \"x\" appears twice");
    const char *apart = "{\"a\": {\"x\": 1}, \"b\": {\"x\": 2}}";
    accepted(apart, strlen(apart)); /* the same key in two objects is fine */
    refused("[1e400]", "[0] is a number too large");
    refused("{\"a\": ", "not valid JSON");
    /* raw NUL bytes: inside a key, and after the value */
    static const char raw[] = "{\"a\0b\": 1}";
    gs_clear_error();
    CHECK(gs_json_parse_strict(raw, sizeof raw - 1, "x.json") == NULL && strstr(gs_error(), "holds a NUL"), "raw NUL in a key: %s",
          gs_error());
    static const char after[] = "{\"a\": 1}\0x";
    gs_clear_error();
    CHECK(gs_json_parse_strict(after, sizeof after - 1, "x.json") == NULL && strstr(gs_error(), "text after"), "a NUL after: %s",
          gs_error());
    accepted("  {\"a\": [1, 2.5e300, \"\\u0001\", {\"b\": null}]}\n\t ", strlen("  {\"a\": [1, 2.5e300, \"\\u0001\", {\"b\": null}]}\n\t "));
    accepted("{\"\\u00e9\": \"\\\\u0000\"}", strlen("{\"\\u00e9\": \"\\\\u0000\"}")); /* an escaped backslash, then u0000: no NUL */
}

static void test_ints(void) {
    static const char *const big[] = {"1e300", "9223372036854775808", "1e20", "2147483648", "-1", "2.5", "\"2\""};
    for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
        char text[64];
        snprintf(text, sizeof text, "{\"n_heads\": %s}", big[i]);
        cJSON *j = gs_json_parse_strict(text, strlen(text), "x.json");
        int64_t v = 7;
        gs_clear_error();
        int rc = gs_json_int(cJSON_GetObjectItem(j, "n_heads"), NULL, 0, INT32_MAX, &v);
        CHECK(rc == -1 && v == 7 && strstr(gs_error(), "\"n_heads\"") && !strchr(gs_error(), '\n'), "n_heads %s: %d %s", big[i], rc,
              gs_error());
        double d = 7;
        rc = gs_json_real(cJSON_GetObjectItem(j, "n_heads"), "layer_norm_eps", 1e-30, 1, &d);
        CHECK(rc == -1 && d == 7 && strstr(gs_error(), "layer_norm_eps"), "as a real %s: %s", big[i], gs_error());
        cJSON_Delete(j);
    }
    cJSON *j = gs_json_parse_strict("[2147483647, 9007199254740992, 0.001]", 37, "x.json");
    int64_t v = 0;
    double d = 0;
    CHECK(gs_json_int(cJSON_GetArrayItem(j, 0), "ids[0]", 0, INT32_MAX, &v) == 0 && v == INT32_MAX, "2^31-1: %s", gs_error());
    CHECK(gs_json_int(cJSON_GetArrayItem(j, 1), "seed", 0, (int64_t)1 << 53, &v) == 0 && v == (int64_t)1 << 53, "2^53: %s", gs_error());
    CHECK(gs_json_real(cJSON_GetArrayItem(j, 2), "eps", 1e-30, 1, &d) == 0 && d == 0.001, "0.001: %s", gs_error());
    cJSON_Delete(j);
}

int main(void) {
    test_parse();
    test_ints();
    return test_summary();
}
