#include "notebooks-export/compare_notebook.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/fs.h"

/* one cell; its source is one string (Jupyter accepts that as well as a list of lines) */
static void cell(cJSON *cells, const char *type, const char *source) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "cell_type", type);
    cJSON_AddObjectToObject(c, "metadata");
    if (type[0] == 'c') {
        cJSON_AddNullToObject(c, "execution_count");
        cJSON_AddArrayToObject(c, "outputs");
    }
    cJSON_AddStringToObject(c, "source", source);
    cJSON_AddItemToArray(cells, c);
}

static const char *const load_cell =
    "import json, math\n"
    "import matplotlib.pyplot as plt\n"
    "doc = json.load(open(JSON))\n"
    "rows = doc['rows']\n"
    "name = lambda i, r: 'R%d %s' % (i + 1, r['label'].split('/')[-1])\n"
    "ci = lambda n: 'n/a' if n['value'] is None else ('%.3g' % n['value'] + ('' if n['lo'] is None else ' [%.3g, %.3g]' % (n['lo'], n['hi'])))\n"
    "print('windows:', doc['windows']['note'])\n"
    "for i, r in enumerate(rows):\n"
    "    d, h, p = r['default_direction'], r['content_horizon'], r['memory_pools']\n"
    "    print(name(i, r))\n"
    "    print('  1. default-token direction: %s, norm ratio %s' % (d['verdict'], ci(d['norm_ratio'])))\n"
    "    print('  2. content horizon: %s, centered c_1 %s, h_0.02 %s' % (h['verdict'], ci(h['centered_first']), ci(h['h_002'])))\n"
    "    print('  3. memory pools: %s %s' % (p['verdict'], p.get('note', '')))\n";

static const char *const figures_cell =
    "fig, ax = plt.subplots(1, 3, figsize=(16, 4.5))\n"
    "for i, r in enumerate(rows):\n"
    "    c = r['curves']\n"
    "    if 'explained' in c: ax[0].plot(range(1, len(c['explained']) + 1), c['explained'], label=name(i, r))\n"
    "    for k, key in ((1, 'raw'), (2, 'centered')):\n"
    "        pts = [(l, y) for l, y, n in zip(c['lags'], c[key], c[key + '_pairs']) if y is not None and n >= 100]\n"
    "        ax[k].plot([l for l, _ in pts], [y for _, y in pts], label=name(i, r))\n"
    "for a, t in zip(ax, ('explained variance', 'raw lag cosine', 'centered lag cosine')):\n"
    "    a.set_xscale('log'); a.set_title(t); a.legend(fontsize=8)\n"
    "plt.show()\n"
    "fig, ax = plt.subplots(1, 2, figsize=(14, 4.5))\n"
    "for i, r in enumerate(rows):\n"
    "    n = r['default_direction']['norm_ratio']\n"
    "    lo, hi = (n['lo'], n['hi']) if n['lo'] is not None else (n['value'], n['value'])\n"
    "    ax[0].errorbar([i + 1], [n['value']], yerr=[[n['value'] - lo], [hi - n['value']]], fmt='o', capsize=4)\n"
    "    e = r['curves']['emergence']\n"
    "    ax[1].plot(range(1, len(e) + 1), e, label=name(i, r))\n"
    "ax[0].axhline(0.25, ls='--', c='grey'); ax[0].set_title('||s_bar|| / mean ||s|| (rule 0.25)'); ax[0].set_xlabel('row')\n"
    "ax[1].set_xscale('log'); ax[1].set_title('emergence cos(m_t, s_bar)'); ax[1].legend(fontsize=8)\n"
    "plt.show()\n"
    "with_heads = [(i, r) for i, r in enumerate(rows) if 'retention' in r['curves']]\n"
    "if with_heads:\n"
    "    plt.figure(figsize=(8, 5))\n"
    "    for j, (i, r) in enumerate(with_heads):\n"
    "        ret = r['curves']['retention']\n"
    "        for h, R in enumerate(ret['R']):\n"
    "            plt.plot(ret['lags'], [math.nan if v is None else v for v in R], c='C%d' % j, label=name(i, r) if h == 0 else None)\n"
    "        for R in ret['R_from_start']:\n"
    "            plt.plot(ret['lags'], [math.nan if v is None else v for v in R], c='C%d' % j, ls='--')\n"
    "    plt.xscale('log'); plt.yscale('log'); plt.ylim(1e-4, 1.2); plt.axhline(math.exp(-1), ls=':', c='grey')\n"
    "    plt.title('per-head retention: all starts (solid), from the start (dashed)'); plt.legend(fontsize=8); plt.show()\n";

int gs_notebook_compare(const char *path, const char *json_name) {
    cJSON *nb = cJSON_CreateObject(), *cells = cJSON_AddArrayToObject(nb, "cells");
    cell(cells, "markdown",
         "# gpnscope compare\n\nThe table and figures of `gpnscope compare`, from `compare.json` beside this notebook: "
         "the default-token direction, the content horizon and the memory pools of each row (a run's state site or "
         "one layer's residual stream), each number with its 95% bootstrap interval over windows. docs/comparison.md "
         "explains the rules.");
    cJSON *json_name_js = cJSON_CreateString(json_name);
    char *quoted = cJSON_PrintUnformatted(json_name_js); /* a JSON string is a valid Python string literal here */
    cJSON_Delete(json_name_js);
    char first[4400];
    snprintf(first, sizeof first, "JSON = %s\n%s", quoted ? quoted : "'compare.json'", load_cell);
    free(quoted);
    cell(cells, "code", first);
    cell(cells, "code", figures_cell);
    cJSON *meta = cJSON_AddObjectToObject(nb, "metadata");
    cJSON *ks = cJSON_AddObjectToObject(meta, "kernelspec");
    cJSON_AddStringToObject(ks, "name", "python3");
    cJSON_AddStringToObject(ks, "display_name", "Python 3");
    cJSON_AddStringToObject(ks, "language", "python");
    cJSON_AddNumberToObject(nb, "nbformat", 4);
    cJSON_AddNumberToObject(nb, "nbformat_minor", 5);
    char *text = cJSON_Print(nb);
    cJSON_Delete(nb);
    if (!text) return gs_fail("out of memory for the notebook");
    int rc = gs_write_atomic(path, text);
    free(text);
    return rc;
}
