/* The schema (docs/schema.md explains it table by table) and the migration
 * framework: PRAGMA user_version holds the schema version; migration k takes
 * a file from version k-1 to k. A file newer than this build is refused
 * rather than misread. */
#include <stdio.h>

#include "base/error.h"
#include "store/store_internal.h"

#define NOW "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"

static const char schema_v1[] =
    /* ---- what was recorded from what ---- */
    "CREATE TABLE models ("
    " id INTEGER PRIMARY KEY,"
    " path TEXT,"
    " sha256 TEXT NOT NULL UNIQUE CHECK (length(sha256) = 64),"
    " arch TEXT,"
    " n_layers INTEGER, d_state INTEGER, d_emb INTEGER, d_ffn INTEGER,"
    " n_heads INTEGER, d_key INTEGER, d_val INTEGER, vocab_size INTEGER,"
    " n_params INTEGER, dtype TEXT,"
    " added_at TEXT NOT NULL DEFAULT " NOW ");"
    "CREATE TABLE tokenizers ("
    " id INTEGER PRIMARY KEY,"
    " path TEXT,"
    " sha256 TEXT NOT NULL UNIQUE CHECK (length(sha256) = 64),"
    " kind TEXT, vocab_size INTEGER,"
    " added_at TEXT NOT NULL DEFAULT " NOW ");"
    "CREATE TABLE corpora ("
    " id INTEGER PRIMARY KEY,"
    " path TEXT,"
    " sha256 TEXT NOT NULL CHECK (length(sha256) = 64),"
    " kind TEXT, n_tokens INTEGER,"
    " tokenizer_id INTEGER REFERENCES tokenizers(id),"
    " added_at TEXT NOT NULL DEFAULT " NOW ");"
    "CREATE UNIQUE INDEX corpora_identity ON corpora(sha256, ifnull(tokenizer_id, 0));"
    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY,"
    " kind TEXT NOT NULL DEFAULT 'record' CHECK (kind IN ('record', 'import')),"
    " model_id INTEGER REFERENCES models(id),"
    " tokenizer_id INTEGER REFERENCES tokenizers(id),"
    " corpus_id INTEGER REFERENCES corpora(id),"
    " seq_len INTEGER, n_windows INTEGER, batch INTEGER,"
    " states TEXT, positions TEXT,"
    " state_dtype TEXT CHECK (state_dtype IN ('f32', 'f16')),"
    " device TEXT, d_state INTEGER, n_heads INTEGER,"
    " settings TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),"
    " code_version TEXT,"
    " started_at TEXT NOT NULL DEFAULT " NOW ","
    " updated_at TEXT,"
    " finished_at TEXT,"
    " status TEXT NOT NULL DEFAULT 'running'"
    "  CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),"
    " windows_done INTEGER NOT NULL DEFAULT 0,"
    " tokens_done INTEGER NOT NULL DEFAULT 0,"
    " message TEXT);"
    /* a window's row is written last, in the batch that completes it */
    "CREATE TABLE windows ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " window INTEGER NOT NULL,"
    " corpus_offset INTEGER, n_tokens INTEGER,"
    " done_at TEXT NOT NULL DEFAULT " NOW ","
    " PRIMARY KEY (run_id, window)) WITHOUT ROWID;"
    /* ---- per-token traces: small rows, clustered by their key ---- */
    "CREATE TABLE tokens ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " window INTEGER NOT NULL, position INTEGER NOT NULL,"
    " token_id INTEGER NOT NULL, next_token_id INTEGER,"
    " nll REAL, entropy REAL, top1 INTEGER,"
    " PRIMARY KEY (run_id, window, position)) WITHOUT ROWID;"
    "CREATE TABLE head_steps ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " window INTEGER NOT NULL, position INTEGER NOT NULL, head INTEGER NOT NULL,"
    " alpha REAL, beta REAL, mem_norm REAL,"
    " PRIMARY KEY (run_id, window, position, head)) WITHOUT ROWID;"
    /* kilobyte BLOBs: a rowid table (WITHOUT ROWID suits small rows only) */
    "CREATE TABLE states ("
    " id INTEGER PRIMARY KEY,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " window INTEGER NOT NULL, position INTEGER NOT NULL,"
    " kind TEXT NOT NULL DEFAULT 'pred',"
    " dtype TEXT NOT NULL CHECK (dtype IN ('f32', 'f16')),"
    " vector BLOB NOT NULL CHECK (typeof(vector) = 'blob' AND length(vector) > 0"
    "  AND length(vector) % (CASE dtype WHEN 'f32' THEN 4 ELSE 2 END) = 0),"
    " UNIQUE (run_id, window, position, kind));"
    /* ---- token text and counts ---- */
    "CREATE TABLE vocabulary ("
    " tokenizer_id INTEGER NOT NULL REFERENCES tokenizers(id) ON DELETE CASCADE,"
    " token_id INTEGER NOT NULL,"
    " piece TEXT NOT NULL, bytes BLOB,"
    " PRIMARY KEY (tokenizer_id, token_id)) WITHOUT ROWID;"
    "CREATE TABLE unigram_counts ("
    " corpus_id INTEGER NOT NULL REFERENCES corpora(id) ON DELETE CASCADE,"
    " token_id INTEGER NOT NULL, count INTEGER NOT NULL,"
    " PRIMARY KEY (corpus_id, token_id)) WITHOUT ROWID;"
    /* ---- analysis results ---- */
    "CREATE TABLE analyses ("
    " id INTEGER PRIMARY KEY,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " name TEXT NOT NULL,"
    " settings TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),"
    " settings_hash TEXT NOT NULL,"
    " created_at TEXT NOT NULL DEFAULT " NOW ","
    " code_version TEXT,"
    " UNIQUE (run_id, name, settings_hash));"
    "CREATE TABLE analysis_scalars ("
    " analysis_id INTEGER NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,"
    " key TEXT NOT NULL, value REAL, note TEXT,"
    " PRIMARY KEY (analysis_id, key)) WITHOUT ROWID;"
    "CREATE TABLE analysis_series ("
    " analysis_id INTEGER NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,"
    " series TEXT NOT NULL, idx INTEGER NOT NULL,"
    " x REAL, y REAL, label TEXT,"
    " PRIMARY KEY (analysis_id, series, idx)) WITHOUT ROWID;"
    "CREATE TABLE analysis_vectors ("
    " analysis_id INTEGER NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,"
    " key TEXT NOT NULL,"
    " vector BLOB NOT NULL CHECK (typeof(vector) = 'blob' AND length(vector) % 4 = 0),"
    " PRIMARY KEY (analysis_id, key));"
    /* per-token NLL under an intervention (gpnscope ablate); the analysis row
     * ("ablation", settings naming the intervention) is its key */
    "CREATE TABLE ablation_tokens ("
    " analysis_id INTEGER NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,"
    " window INTEGER NOT NULL, position INTEGER NOT NULL, nll REAL,"
    " PRIMARY KEY (analysis_id, window, position)) WITHOUT ROWID;"
    /* ---- views: joins people would otherwise retype (no extension needed) ---- */
    "CREATE VIEW token_states AS"
    " SELECT t.run_id, t.window, t.position, t.token_id, t.next_token_id, t.nll, t.entropy, t.top1,"
    "  s.kind, s.dtype, s.vector"
    " FROM tokens t JOIN states s"
    "  ON s.run_id = t.run_id AND s.window = t.window AND s.position = t.position;"
    "CREATE VIEW tokens_text AS"
    " SELECT t.run_id, t.window, t.position, t.token_id, v.piece, t.next_token_id, nv.piece AS next_piece,"
    "  t.top1, tv.piece AS top1_piece, t.nll, t.entropy"
    " FROM tokens t JOIN runs r ON r.id = t.run_id"
    " LEFT JOIN vocabulary v ON v.tokenizer_id = r.tokenizer_id AND v.token_id = t.token_id"
    " LEFT JOIN vocabulary nv ON nv.tokenizer_id = r.tokenizer_id AND nv.token_id = t.next_token_id"
    " LEFT JOIN vocabulary tv ON tv.tokenizer_id = r.tokenizer_id AND tv.token_id = t.top1;"
    "CREATE VIEW head_means AS"
    " SELECT run_id, head, count(*) AS n_steps, avg(alpha) AS mean_alpha, avg(beta) AS mean_beta,"
    "  avg(mem_norm) AS mean_mem_norm"
    " FROM head_steps GROUP BY run_id, head;"
    "CREATE VIEW run_summary AS"
    " SELECT run_id, kind, status, model, model_sha256, corpus, seq_len, windows_done, tokens_done,"
    "  mean_nll, exp(mean_nll) AS perplexity, started_at, finished_at"
    " FROM (SELECT r.id AS run_id, r.kind, r.status, m.path AS model, m.sha256 AS model_sha256,"
    "  c.path AS corpus, r.seq_len, r.windows_done, r.tokens_done,"
    "  (SELECT avg(nll) FROM tokens t WHERE t.run_id = r.id) AS mean_nll, r.started_at, r.finished_at"
    "  FROM runs r LEFT JOIN models m ON m.id = r.model_id LEFT JOIN corpora c ON c.id = r.corpus_id);"
    "CREATE VIEW ablation_effects AS"
    " SELECT a.run_id, a.id AS analysis_id, json_extract(a.settings, '$.what') AS intervention,"
    "  json_extract(a.settings, '$.scope') AS scope, x.window, x.position, t.token_id,"
    "  t.nll AS nll_base, x.nll AS nll_ablated, x.nll - t.nll AS nll_change"
    " FROM analyses a JOIN ablation_tokens x ON x.analysis_id = a.id"
    " JOIN tokens t ON t.run_id = a.run_id AND t.window = x.window AND t.position = x.position;"
    "CREATE VIEW analysis_values AS"
    " SELECT a.run_id, a.name AS analysis, a.settings, s.key, s.value, s.note, a.created_at, a.id AS analysis_id"
    " FROM analyses a JOIN analysis_scalars s ON s.analysis_id = a.id;";

/* Version 2: a run says which sites it recorded and where each lives, so
 * that any family's run (its state, its decay rates, per-layer sites) is read
 * by name. A version-1 store gets the rows its recordings imply. */
static const char schema_v2[] =
    "CREATE TABLE run_sites ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " site TEXT NOT NULL,"
    " shape TEXT NOT NULL CHECK (shape IN ('vector', 'per-head scalar', 'per-head vector', 'per-head matrix', 'scalar')),"
    " layer INTEGER,"
    " width INTEGER NOT NULL CHECK (width > 0),"
    " dtype TEXT CHECK (dtype IN ('f32', 'f16')),"
    " stored_in TEXT NOT NULL CHECK (stored_in IN ('states', 'head_steps', 'tokens')),"
    " stored_as TEXT NOT NULL,"
    " role TEXT CHECK (role IN ('state', 'decay')),"
    " PRIMARY KEY (run_id, site)) WITHOUT ROWID;"
    /* what version-1 recordings hold: states by kind, the memory's per-head rows, the NLL */
    "INSERT INTO run_sites SELECT run_id,"
    "  CASE kind WHEN 'pred' THEN 'state.pred' WHEN 'ground' THEN 'state.ground' ELSE kind END, 'vector', NULL,"
    "  length(vector) / (CASE dtype WHEN 'f32' THEN 4 ELSE 2 END), dtype, 'states', kind,"
    "  CASE kind WHEN 'pred' THEN 'state' END"
    " FROM states GROUP BY run_id, kind;"
    "INSERT INTO run_sites SELECT r.id, 'mem.' || c.name, 'per-head scalar', NULL, r.n_heads, NULL, 'head_steps',"
    "  c.col, CASE c.col WHEN 'alpha' THEN 'decay' END"
    " FROM runs r, (SELECT 'alpha' AS name, 'alpha' AS col UNION ALL SELECT 'beta', 'beta'"
    "  UNION ALL SELECT 'norm', 'mem_norm') c"
    " WHERE r.n_heads > 0 AND EXISTS (SELECT 1 FROM head_steps h WHERE h.run_id = r.id AND"
    "  (CASE c.col WHEN 'alpha' THEN h.alpha WHEN 'beta' THEN h.beta ELSE h.mem_norm END) IS NOT NULL);"
    "INSERT INTO run_sites SELECT id, 'nll', 'scalar', NULL, 1, NULL, 'tokens', 'nll', NULL FROM runs;";

/* Version 3: causal tools' results (docs/causal.md), keyed by their analysis
 * row: effective attention of delta-rule heads (per query the top keys and
 * the mass they hold, the full query x key matrix for short windows) and
 * direct logit attribution. Additive: new tables and views only. */
static const char schema_v3[] =
    "CREATE TABLE attention_queries ("
    " analysis_id INTEGER NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,"
    " window INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, query INTEGER NOT NULL,"
    " n_keys INTEGER NOT NULL, topk_mass REAL, l1 REAL, heuristic_l1 REAL, read_error REAL, heuristic_error REAL,"
    " PRIMARY KEY (analysis_id, window, layer, head, query)) WITHOUT ROWID;"
    "CREATE TABLE attention_topk ("
    " analysis_id INTEGER NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,"
    " window INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, query INTEGER NOT NULL,"
    " rank INTEGER NOT NULL, key INTEGER NOT NULL, weight REAL NOT NULL, heuristic REAL,"
    " PRIMARY KEY (analysis_id, window, layer, head, query, rank)) WITHOUT ROWID;"
    "CREATE TABLE attention_matrices ("
    " id INTEGER PRIMARY KEY,"
    " analysis_id INTEGER NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,"
    " window INTEGER NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL,"
    " kind TEXT NOT NULL CHECK (kind IN ('exact', 'heuristic')),"
    " n INTEGER NOT NULL CHECK (n > 0),"
    " weights BLOB NOT NULL CHECK (typeof(weights) = 'blob' AND length(weights) = 4 * n * n),"
    " UNIQUE (analysis_id, window, layer, head, kind));"
    "CREATE TABLE logit_attribution ("
    " analysis_id INTEGER NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,"
    " window INTEGER NOT NULL, position INTEGER NOT NULL,"
    " part TEXT NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL,"
    " token_id INTEGER, logit REAL,"
    " PRIMARY KEY (analysis_id, window, position, part, layer, head)) WITHOUT ROWID;"
    "CREATE VIEW attention_top_text AS"
    " SELECT a.run_id, x.analysis_id, x.window, x.layer, x.head, x.query, x.rank, x.key, x.weight, x.heuristic,"
    "  qt.piece AS query_piece, kt.piece AS key_piece"
    " FROM attention_topk x JOIN analyses a ON a.id = x.analysis_id"
    " LEFT JOIN tokens_text qt ON qt.run_id = a.run_id AND qt.window = x.window AND qt.position = x.query"
    " LEFT JOIN tokens_text kt ON kt.run_id = a.run_id AND kt.window = x.window AND kt.position = x.key;";

const store_migration store_migrations[] = {
    {1, schema_v1},
    {2, schema_v2},
    {3, schema_v3},
};
const int store_n_migrations = (int)(sizeof store_migrations / sizeof *store_migrations);

static int pragma_int(sqlite3 *db, const char *sql, int *out) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) return -1;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 0 : -1;
}

int store_migrate(sqlite3 *db, const char *path, const store_migration *list, int n, int target) {
    int version;
    if (pragma_int(db, "PRAGMA user_version", &version))
        return gs_fail("%s: reading the schema version: %s", path, sqlite3_errmsg(db));
    if (version > target)
        return gs_fail("%s has store schema version %d, newer than this gpnscope understands (%d): use a newer gpnscope",
                       path, version, target);
    if (version == target) return 0;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return gs_fail("%s: starting the schema migration: %s", path, sqlite3_errmsg(db));
    /* another process may have migrated while we waited for the lock */
    if (pragma_int(db, "PRAGMA user_version", &version)) goto fail;
    for (int i = 0; i < n; i++) {
        if (list[i].version <= version || list[i].version > target) continue;
        char *err = NULL;
        if (sqlite3_exec(db, list[i].sql, NULL, NULL, &err) != SQLITE_OK) {
            gs_fail("%s: migrating the store to schema version %d: %s", path, list[i].version, err ? err : "error");
            sqlite3_free(err);
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
        version = list[i].version;
    }
    if (version != target) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return gs_fail("%s: no migration reaches schema version %d (stopped at %d)", path, target, version);
    }
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d; PRAGMA application_id = %d", target, STORE_APPLICATION_ID);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) goto fail;
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) goto fail;
    return 0;
fail:
    gs_fail("%s: migrating the store schema: %s", path, sqlite3_errmsg(db));
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}
