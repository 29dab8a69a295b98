/* The page (view/view.h): view/page.css and view/page.js (embedded at build
 * time, view/module.cmake) around the data of view_data.c, in one file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "view/view.h"
#include "view/view_assets.h"

/* The data inside <script type="application/json">: "</" would end the
 * element early, so every "<" is written as \u003c (the JSON reads the same). */
static size_t json_for_script(const char *json, char *out) {
    size_t o = 0;
    for (const char *p = json; *p; p++) {
        if (*p == '<') { memcpy(out + o, "\\u003c", 6); o += 6; }
        else out[o++] = *p;
    }
    out[o] = 0;
    return o;
}

int gs_view_write(store *st, const gs_view_opts *o, const char *path, gs_view_result *r) {
    char *json = gs_view_data(st, o, r);
    if (!json) return -1;
    if (r->runs == 0) {
        free(json);
        return gs_fail("%s has no runs with token rows: record one first", store_path(st));
    }
    static const char head[] = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                               "<meta name=\"viewport\" content=\"width=device-width\">\n"
                               "<title>gpnscope view</title>\n<style>\n";
    static const char mid[] = "</style></head>\n<body>\n<div id=\"app\">loading...</div>\n"
                              "<script id=\"gpnscope-data\" type=\"application/json\">";
    static const char tail1[] = "</script>\n<script>\n";
    static const char tail2[] = "</script>\n</body></html>\n";
    size_t n = strlen(json);
    size_t cap = sizeof head + sizeof mid + sizeof tail1 + sizeof tail2 + gs_view_page_css_len + gs_view_page_js_len + 6 * n + 1;
    char *page = malloc(cap);
    if (!page) { free(json); return gs_fail("out of memory writing the page"); }
    size_t k = 0;
#define PUT(s, len) (memcpy(page + k, (s), (len)), k += (len))
    PUT(head, sizeof head - 1);
    PUT(gs_view_page_css, gs_view_page_css_len);
    PUT(mid, sizeof mid - 1);
    k += json_for_script(json, page + k);
    PUT(tail1, sizeof tail1 - 1);
    PUT(gs_view_page_js, gs_view_page_js_len);
    PUT(tail2, sizeof tail2 - 1);
#undef PUT
    page[k] = 0;
    free(json);
    r->bytes = k;
    int rc = gs_write_atomic(path, page);
    free(page);
    return rc;
}
