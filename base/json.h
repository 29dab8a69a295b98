/* Strict JSON for the files a user hands gpnscope (configs, tokenizer.json,
 * prompt pairs, corpus index files, safetensors headers), on top of cJSON.
 *
 * cJSON alone accepts text after the value ("{...} junk"), cuts a string at
 * an escaped NUL ("n_heads\u0000x" becomes the key n_heads) and reads 1e999
 * as infinity. gs_json_parse_strict refuses all three, naming the byte
 * offset, the key or the path of the number; the integer and real readers
 * check the range before any conversion, so no out-of-range double is ever
 * cast (which C leaves undefined). */
#ifndef GS_BASE_JSON_H
#define GS_BASE_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* Parse text[0..len) as one JSON value followed by nothing but white space;
 * no string (key or value) may hold U+0000 and every number must be finite.
 * NULL with gs_error() "WHAT: problem" otherwise. */
cJSON *gs_json_parse_strict(const char *text, size_t len, const char *what);

/* item as an integer in [lo, hi] (both within +-2^53, where doubles are
 * exact); -1 with gs_error() "NAME = 1e+300 is not an integer from LO to HI"
 * when it is not a number, not whole, or out of range. name is printed as
 * given; NULL names the member by its key, in quotes. */
int gs_json_int(const cJSON *item, const char *name, int64_t lo, int64_t hi, int64_t *out);

/* item as a number in [lo, hi]: -1 with gs_error() naming it (as above) otherwise. */
int gs_json_real(const cJSON *item, const char *name, double lo, double hi, double *out);

#endif
