# %% [markdown] intro
# @INTRO@

# %% setup
# Written by `gpnscope export-notebook` (gpnscope @VERSION@). The notebook only reads the store;
# after `gpnscope analyze` adds or replaces results, execute it again to see them. It reads the
# results through the gpnscope package (docs/python.md) and asks SQL questions through sqlite3.
import json, math, os, sqlite3
import numpy as np
try:
    import gpnscope
except ImportError as e:
    raise ImportError('this notebook reads the store with the gpnscope Python package: run scripts/setup.sh '
                      '(or scripts/install-python.sh) of gpnscope, then execute it again') from e
import pandas as pd
import matplotlib.pyplot as plt
from IPython.display import display

# The store: relative to this notebook first, then the path given to export-notebook.
STORE_PATHS = @STORE_PATHS@
RUN = @RUN@
# The gpnscope_vec SQLite extension (the vector functions of docs/sql.md) found when the
# notebook was written, or None. The environment variable GPNSCOPE_VEC overrides it.
VEC_EXTENSION = @VEC@

STORE = next((p for p in STORE_PATHS if os.path.isfile(p)), None)
if STORE is None:
    raise FileNotFoundError('the store is at none of ' + ', '.join(STORE_PATHS) + ': put its path in STORE_PATHS')
st = gpnscope.Store(STORE)  # the results, states and vocabulary, read only
con = sqlite3.connect(STORE)  # the questions asked in SQL (q below)
con.execute('PRAGMA query_only = ON')  # read only: nothing here changes the store
print(f'store {STORE}, run {RUN}')

pd.set_option('display.width', 130)
pd.set_option('display.max_columns', 30)
pd.set_option('display.html.use_mathjax', False)  # a piece or path like '$$x$$' in a table is text, not math
plt.rcParams.update({'figure.dpi': 96, 'axes.grid': True, 'grid.alpha': 0.3})
# token pieces are labels, not formulas: a piece such as '$$' must not start matplotlib's mathtext
if 'text.parse_math' in plt.rcParams:
    plt.rcParams['text.parse_math'] = False

# %% load-vec
def load_vec(con):
    """Load the vector functions (vec_norm, vec_cosine, vec_avg, ...) if the extension is there."""
    path = os.environ.get('GPNSCOPE_VEC') or VEC_EXTENSION
    if not path:
        print('note: no gpnscope_vec extension was found when this notebook was written and GPNSCOPE_VEC is not set;')
        print('      the vector queries below compute the same numbers with numpy instead.')
        return False
    try:
        con.enable_load_extension(True)
        con.load_extension(path)
        con.enable_load_extension(False)
    except (AttributeError, sqlite3.Error) as e:
        print(f'note: the vector extension {path} could not be loaded ({e});')
        print('      the vector queries below compute the same numbers with numpy instead.')
        return False
    print(f'vector functions loaded from {path}')
    return True

HAVE_VEC = load_vec(con)

# %% helpers
import contextlib

class StoreProblem(Exception):
    """Results in the store that are not in the form this notebook reads."""

@contextlib.contextmanager
def reading(what):
    """A section of the notebook: results of the wrong form are said in one line and the notebook goes on."""
    try:
        yield
    except Exception as e:
        why = str(e) if isinstance(e, StoreProblem) else \
            f'the stored results are not in the form this notebook reads ({type(e).__name__}: {e})'
        print(f'{what}: not shown: {why}')
        plt.close('all')

# what later sections read, for when an earlier one could not be shown
SEQ_LEN, g, dd, h, r, p, f = 1, None, None, None, None, None, None
G, D, HZ, RT, P = {}, {}, {}, {}, {}

def q(sql, *params):
    """The rows of a query as a DataFrame."""
    return pd.read_sql_query(sql, con, params=params)

def analysis(name):
    """The id of the newest analysis `name` of this run, or None when it was not run."""
    return st.analysis_id(name, run=RUN)

def scalars(aid):
    """The scalars that are numbers (inf included); a NULL or text value is said and left out."""
    out, bad = {}, []
    for key, v in st.scalars(aid, run=RUN).items():
        if isinstance(v, (int, float)) and not math.isnan(v):
            out[key] = v
        else:
            bad.append(f'{key} = {v!r}')
    if bad:
        print(f'note: analysis {aid} has {len(bad)} scalar(s) that are not numbers, left out: '
              + ', '.join(bad[:8]) + (' ...' if len(bad) > 8 else ''))
    return out

def series(aid, name):
    """A stored series (curve or list) as a DataFrame with columns x, y, label, in stored order (empty when absent)."""
    try:
        return pd.DataFrame(st.series(aid, name, run=RUN, missing_ok=True))
    except gpnscope.Error as e:
        raise StoreProblem(str(e)) from None

def vector(aid, key):
    """A stored vector (float32) as a numpy array, or None."""
    try:
        return st.vector(aid, key, run=RUN, missing_ok=True)
    except gpnscope.Error as e:
        raise StoreProblem(str(e)) from None

def facts(aid, keys):
    """Print stored scalars with every digit (repr) and return all of them."""
    s = scalars(aid)
    for key, label in keys:
        v = s.get(key)
        if v is not None:
            print(f'{label:<46} {int(v) if float(v).is_integer() else v!r}')
    return s

def not_analysed(name, why=''):
    print(f"run {RUN} has no '{name}' results in {STORE}{why}: run `gpnscope analyze {STORE} --run {RUN}`,"
          ' then execute this notebook again')

# The run's vocabulary (token id -> piece text), when its tokenizer is in the store
PIECES = st.vocabulary(run=RUN)

def piece(tok):
    return repr(PIECES[tok]) if tok in PIECES else f'#{tok}'

# %% [markdown] md-run
# ## 1. The store and the run
#
# A store is one SQLite file per study (`docs/schema.md` describes every table). `runs` has one row per
# recording or import: what was recorded (model, tokenizer and corpus, by content hash), with which settings and
# code version, its status and progress. The view `run_summary` adds the mean loss and perplexity of the run's
# tokens. Every trace row (`tokens`, `head_steps`, `states`) is keyed by (`run_id`, `window`, `position`).

# %% run
runs = q('SELECT run_id, kind, status, windows_done, tokens_done, round(mean_nll, 4) AS mean_nll,'
         ' round(perplexity, 3) AS perplexity, started_at FROM run_summary ORDER BY run_id')
display(runs)
row = con.execute('SELECT seq_len, n_heads, d_state, states, positions, state_dtype FROM runs WHERE id = ?',
                  (RUN,)).fetchone()
if row is None:
    raise StoreProblem(f'run {RUN} is not in {STORE}: the table above lists the runs; set RUN to one of them')
SEQ_LEN = int(row[0] or 1)
print(f'run {RUN}: windows of {SEQ_LEN} tokens, {row[1] or 0} memory heads, d_state = {row[2]},'
      f' states {row[3]!r} at positions {row[4]!r} as {row[5]}')
display(q('SELECT m.arch, m.n_layers, m.d_state, m.n_heads, m.vocab_size, m.n_params, m.sha256, m.path'
          ' FROM models m JOIN runs r ON r.model_id = m.id WHERE r.id = ?', RUN))
display(q('SELECT key AS setting, value FROM runs, json_each(runs.settings) WHERE runs.id = ?', RUN))

# %% [markdown] md-sql
# ## 2. Questions in SQL
#
# Any question about the traces is a query (`docs/sql.md` has twenty worked ones, each run by a test). Three
# here. The first needs only SQLite's math functions: the **mean decay per head** and the memory horizon it
# implies, the extrapolation 1 / (−mean log α) of section 5: the number of steps after which a head keeps 1/e
# of what was written.

# %% sql-head-decay
heads = q('''
SELECT head,
       count(*) AS steps,
       round(avg(alpha), 4) AS mean_alpha,
       round(avg(beta), 4) AS mean_beta,
       round(-1.0 / avg(ln(alpha)), 2) AS horizon_tokens
FROM head_steps
WHERE run_id = ? AND alpha > 0
GROUP BY head
ORDER BY head''', RUN)
if heads.empty:
    print(f'run {RUN} has no head steps: a GPN has no memory heads (only a GPN+M records decays)')
else:
    display(heads)

# %% [markdown] md-sql-norms
# The **norm of the states by position bucket**: how long the predicted state is early and late in the
# window. States are BLOBs of little-endian float32 (or float16: the `dtype` column says which), so this one
# uses the vector functions: `vec_f32(vector, dtype)` widens either to float32 and `vec_norm` takes the
# Euclidean norm. Without the extension the same numbers come from numpy.

# %% sql-state-norms
BUCKET = max(1, SEQ_LEN // 8)
if HAVE_VEC:
    norms = q('''
    SELECT (position / ?) * ? AS from_position,
           count(*) AS states,
           avg(vec_norm(vec_f32(vector, dtype))) AS mean_norm
    FROM states
    WHERE run_id = ? AND kind = 'pred'
    GROUP BY position / ?
    ORDER BY from_position''', BUCKET, BUCKET, RUN, BUCKET)
else:
    pos, nrm = [], []
    for p, dt, blob in con.execute("SELECT position, dtype, vector FROM states WHERE run_id = ? AND kind = 'pred'",
                                   (RUN,)):
        v = np.frombuffer(blob, dtype='<f2' if dt == 'f16' else '<f4').astype(np.float64)
        pos.append(p)
        nrm.append(math.sqrt(float(v @ v)))
    df = pd.DataFrame({'from_position': (np.asarray(pos, dtype=np.int64) // BUCKET) * BUCKET, 'norm': nrm})
    norms = df.groupby('from_position').agg(states=('norm', 'size'), mean_norm=('norm', 'mean')).reset_index()
if norms.empty:
    print(f"run {RUN} has no 'pred' states (recorded with --states none or ground)")
else:
    norms['mean_norm'] = norms['mean_norm'].round(4)
    display(norms)

# %% [markdown] md-sql-loss
# The **loss and entropy by position bucket**, and the top-1 accuracy: a `tokens` row's `nll`, `entropy` and
# `top1` describe the prediction of its own token, made from the predicted state before the token was read.

# %% sql-loss
display(q('''
SELECT (position / ?) * ? AS from_position,
       count(*) AS tokens,
       round(avg(entropy), 4) AS mean_entropy,
       round(avg(nll), 4) AS mean_nll,
       round(avg(top1 = token_id), 4) AS top1_accuracy
FROM tokens
WHERE run_id = ?
GROUP BY position / ?
ORDER BY from_position''', BUCKET, BUCKET, RUN, BUCKET))

# %% [markdown] md-analyses
# The analyses stored for this run (`gpnscope analyze` writes one row per part, keyed by its settings:
# the same settings replace earlier results, other settings add a row). The sections below use the newest
# row of each.

# %% analyses
display(q('SELECT id, name, settings, created_at, code_version FROM analyses WHERE run_id = ? ORDER BY id', RUN))

# %% [markdown] md-geometry
# ## 3. Geometry of the state (paper §5.1, figure "state_geometry")
#
# S is the set of recorded predicted states s<sup>p</sup><sub>t</sub> (rows): the first `max_states` of the run
# (16384 unless set otherwise) in (window, position) order, after positions below `skip_positions` are left
# out. Everything in this section comes from one streaming pass, with the covariance accumulated in double
# precision (divided by n − 1).
#
# | quantity | definition | paper (1-layer GPN+M, 130M) |
# |---|---|---|
# | norm mean / std | mean and std of ‖s‖ over S | 132 / 9 |
# | per-dim std | std of each coordinate over S, sorted descending (panel a) | min 1.05, max 11.3 |
# | dead dims | coordinates whose std < 10⁻³ × the median std | 0 |
# | off-diagonal correlation | Pearson correlation matrix of the d coordinates: mean and max of \|r<sub>ij</sub>\| over i ≠ j (coordinates of zero variance left out) | 0.027, 0.61 |
# | correlation heatmap | the matrix on a fixed, seeded random sample of 300 coordinates (panel b) | |
# | PCA | eigenvalues λ of the centered covariance C; cumulative explained variance (panel c); the number of components reaching 90% and 99% | 1131 and 2099 of 2496 |
# | stable rank | Σλ / max λ | 40 |
# | participation ratio | (Σλ)² / Σλ², computed as tr(C)² / ‖C‖²<sub>F</sub> | 398 |
#
# A model with a smaller state has smaller counts: compare components / d rather than the counts.

# %% geometry
g = analysis('geometry')
if g is None:
    not_analysed('geometry')
else:
    G = facts(g, [('n_states', 'states'), ('n_windows', 'windows'), ('d', 'd (state size)'),
                  ('norm_mean', 'norm mean'), ('norm_std', 'norm std'),
                  ('dim_std_min', 'per-dim std, min'), ('dim_std_max', 'per-dim std, max'),
                  ('dead_dims', 'dead dims'), ('corr_mean_abs', 'off-diagonal |corr|, mean'),
                  ('corr_max_abs', 'off-diagonal |corr|, max'),
                  ('components_90', 'PCA components for 90%'), ('components_99', 'PCA components for 99%'),
                  ('stable_rank', 'stable rank'), ('participation_ratio', 'participation ratio')])
    std, cum = series(g, 'dim_std_sorted'), series(g, 'cumulative_explained')
    corr, dims = vector(g, 'corr_sample'), vector(g, 'corr_sample_dims')
    fig, ax = plt.subplots(1, 3, figsize=(16, 4.6))
    ax[0].plot(std.x, std.y, color='tab:blue')
    ax[0].set(xlabel='coordinate rank (by std, descending)', ylabel='std over states',
              title='(a) per-coordinate std, sorted')
    if corr is not None and dims is not None and len(dims) ** 2 == len(corr):
        m = len(dims)
        im = ax[1].imshow(corr.reshape(m, m), cmap='RdBu_r', vmin=-1, vmax=1, interpolation='nearest')
        fig.colorbar(im, ax=ax[1], label='Pearson r')
        ax[1].grid(False)
        ax[1].set(xlabel='sampled coordinate', ylabel='sampled coordinate',
                  title=f'(b) correlations of {m} sampled coordinates')
    else:
        ax[1].text(0.5, 0.5, 'no correlation sample stored', ha='center', va='center', transform=ax[1].transAxes)
    if not cum.empty:
        ax[2].plot(cum.x, 100 * cum.y, color='tab:blue', label='cumulative explained variance')
        for key, share, color in (('components_90', 90, 'tab:orange'), ('components_99', 99, 'tab:red')):
            if key in G:
                ax[2].axhline(share, color=color, ls=':', lw=1)
                ax[2].axvline(G[key], color=color, ls='--', lw=1, label=f'{share}% at {G[key]:.0f} components')
        ax[2].legend(loc='lower right')
    ax[2].set(xlabel='principal components', ylabel='explained variance (%)',
              title='(c) PCA: cumulative explained variance')
    fig.suptitle(f"State geometry of run {RUN}: {G.get('n_states', 0):.0f} predicted states, d = {G.get('d', 0):.0f}")
    fig.tight_layout()
    plt.show()

# %% [markdown] md-default
# ## 4. The mean direction: the default-token distribution (paper §5.2)
#
# s̄ is the mean of S. The paper found it long, stable across batches, and decoded into a "default"
# distribution that tracks unigram frequency.
#
# | quantity | definition | paper |
# |---|---|---|
# | mean state | ‖s̄‖, and ‖s̄‖ / mean ‖s‖ | 107, i.e. 107 / 132 = 0.81 of its mean norm (its text's "58% of the typical magnitude" does not follow from these figures) |
# | cross-batch stability | the windows split into 8 batches of consecutive windows (8 chunks of rows when there are fewer than 8 windows); the cosine between every pair of batch means (28 pairs), mean ± std; beside it, 8 random batches of rows (`batch_cos_random_mean`), which no window separates | 0.988 ± 0.005 (consecutive) |
# | default tokens | logits_bar = decode(s̄) Eᵀ with the model's own decode (RMSNorm, projection, embedding); its top tokens, ties to the lower id | ",", " and", " the", " in", " to", " a" … |
# | unigram agreement | Spearman rank correlation between logits_bar and unigram counts over the whole vocabulary (tied values get their average rank): against the training corpus (`spearman_unigram_train`, with `analyze --train-corpus`), the paper's comparison, and separately against the recorded text (`spearman_unigram`), which is not comparable with the paper's | +0.46 (training corpus) |
# | embedding control | ē = the mean row of E, logits_emb = E ē: the overlap of its top 10 with the default tokens, and cos(logits_emb, logits_bar) | 0/10; −0.62 |
# | emergence | within each window m<sub>t</sub> = the mean of its first t states; cos(m<sub>t</sub>, s̄) averaged over the windows that have t states, as a curve over t | 0.98 at t = 10, 0.996 at t = 100 |
# | top PC | cos(s̄, the first right singular vector of the uncentered state matrix), which leans to s̄ by construction when ‖s̄‖² exceeds the top centered eigenvalue; beside it \|cos(s̄, centered PC1)\| (`pc1_cos`) | s̄ is the top PC (uncentered) |
#
# The default tokens, the Spearman coefficient and the embedding control need the model: `gpnscope analyze`
# skips them, with a note, when the run's model file cannot be found (give it with `--model`).

# %% default-direction
dd = analysis('default_direction')
if dd is None:
    not_analysed('default_direction')
else:
    D = facts(dd, [('mean_norm', '||s_bar||'), ('norm_ratio', '||s_bar|| / mean ||s||'),
                   ('batch_cos_mean', 'cross-batch cosine, mean'), ('batch_cos_std', 'cross-batch cosine, std'),
                   ('batch_cos_random_mean', 'cross-batch cosine, 8 random batches of rows'),
                   ('spearman_unigram_train', 'Spearman vs training-corpus unigram counts'),
                   ('spearman_unigram', 'Spearman vs recorded-text unigram counts'),
                   ('embedding_overlap', 'embedding control: top-10 overlap'),
                   ('embedding_cos', 'embedding control: cosine'),
                   ('emergence_t10', 'emergence cos(m_t, s_bar) at t = 10'),
                   ('emergence_t100', 'emergence cos(m_t, s_bar) at t = 100'),
                   ('top_sv_cos', 'cos(s_bar, top right singular vector, uncentered)'),
                   ('pc1_cos', '|cos(s_bar, centered PC1)|'),
                   ('mean_norm2_over_lambda1', '||s_bar||^2 / top centered eigenvalue')])

# %% default-tokens
if dd is not None:
    logits, stored = vector(dd, 'logits_bar'), series(dd, 'default_tokens')
    if logits is not None:
        # descending, ties to the lower id: the rule the stored top 10 follows
        order = np.lexsort((np.arange(len(logits)), -logits.astype(np.float64)))[:20]
        top = pd.DataFrame({'token_id': order, 'token': [piece(int(t)) for t in order], 'logit': logits[order]})
        same = [int(t) for t in order[:len(stored)]] == [int(x) for x in stored.x]
        print(f'the top {len(stored)} of logits_bar are the stored default tokens: {same}')
    else:
        top = pd.DataFrame({'token_id': stored.x.astype(int), 'token': [piece(int(t)) for t in stored.x],
                            'logit': stored.y})
    if top.empty:
        print('no default tokens stored: the analysis ran without the model (gpnscope analyze --model MODEL)')
    else:
        fig, ax = plt.subplots(figsize=(8, 0.28 * len(top) + 1.6))
        ax.barh(np.arange(len(top)), top.logit, color='tab:blue')
        ax.set_yticks(np.arange(len(top)))
        ax.set_yticklabels(top.token)
        ax.invert_yaxis()
        ax.set(xlabel='logit of decode(s_bar)', ylabel='token',
               title=f'Default tokens of run {RUN}: the top {len(top)} of decode(s_bar)')
        fig.tight_layout()
        plt.show()
        emb = series(dd, 'embedding_tokens')
        n = max(len(stored), len(emb))
        col = lambda s: [piece(int(t)) for t in s.x] + [''] * (n - len(s))
        display(pd.DataFrame({'rank': range(1, n + 1), 'default token': col(stored),
                              'embedding control token': col(emb)}))

# %% emergence
if dd is not None:
    em = series(dd, 'emergence')
    if em.empty:
        print('no emergence curve stored')
    else:
        fig, ax = plt.subplots(figsize=(8, 4.4))
        ax.plot(em.x, em.y, color='tab:blue', label='cos(m_t, s_bar), mean over windows')
        for t, key in ((10, 'emergence_t10'), (100, 'emergence_t100')):
            if key in D:
                ax.plot([t], [D[key]], 'o', color='tab:red')
                ax.annotate(f't = {t}: {D[key]:.3f}', (t, D[key]), textcoords='offset points', xytext=(6, -14))
        ax.set_xscale('log')
        ax.set(xlabel='t (states of the window averaged)', ylabel='cosine to the overall mean state s_bar',
               title=f'Emergence of the mean direction, run {RUN}')
        ax.legend(loc='lower right')
        fig.tight_layout()
        plt.show()

# %% [markdown] md-horizons
# ## 5. Horizons (paper §5.3, figure "horizons")
#
# **State horizon.** The raw lag cosine c<sub>k</sub> is the mean of cos(s<sub>t</sub>, s<sub>t+k</sub>) over
# all pairs (t, t+k) in the same window, pooled over windows, on a log-spaced lag grid (16 lags per decade)
# up to the longest window. The centered lag cosine is the same after subtracting each window's own mean
# state. Paper: the raw curve stays near 0.65 out to k = 1500 (the shared mean direction), the centered one is
# 0.31 at k = 1 and about 0 by k = 256. The **content horizons** come from the centered curve: h<sub>e</sub>,
# the smallest k with c<sub>k</sub> ≤ c<sub>1</sub>/e, and h<sub>0.02</sub>, the smallest k with
# c<sub>k</sub> < 0.02, both interpolated linearly in c against log k. A curve that never crosses gives a
# right-censored value: the last lag, a lower bound. (Subtracting a window's own mean biases the centered
# curve down by about Var(window mean) / Var(state); it is reported as defined, not corrected.)
#
# **Memory horizon (GPN+M).** α<sup>h</sup><sub>t</sub> is the decay applied to memory head h at step t. The
# retention R<sub>h</sub>(k) = mean over t of Π<sub>τ=t+1..t+k</sub> α<sup>h</sup><sub>τ</sub> is the share
# of a write that survives k steps, averaged over every start t (gpnscope's estimator); the paper's caption
# takes the product from the start of the window instead (R<sub>h</sub>(k) = mean over windows of
# Π<sub>τ=1..k</sub> α<sup>h</sup><sub>τ</sub>), and both are stored (`_from_start`). The **1/e time**
# k<sub>h</sub> is the smallest k with R<sub>h</sub>(k) ≤ 1/e, interpolated linearly in log R (the paper calls it
# a half-life; a half-life proper is ln 2 times as long); a head that does not get there inside the window is
# right-censored and given the extrapolation 1 / (−mean log α<sup>h</sup>). The heads are split in two
# **pools** at the cut of the sorted log k<sub>h</sub> that best fits two normal pools (each its own mean and variance,
# at least 3 heads); their log likelihood ratio against one pool is read against five one-pool nulls (normal,
# uniform, Laplace, Student t3, and the initialisation's own spread of time constants, 1/(A dt) with
# A ~ U(0, 16), dt log-uniform in [0.001, 0.1]; 65536 draws each, so the Monte Carlo SE of p is below 0.002): present when
# every p + 4 SE < 0.05, not demonstrated when some p − 4 SE ≥ 0.05, inconclusive otherwise, read beside the rule's
# power, the share of simulated sets with the paper's two pools that it finds. Paper: H = 15 heads, a fast pool of 6 heads
# at 1–3 tokens and a slow pool of 9 heads at 5–322 tokens.

# %% horizons
h, r = analysis('horizons'), analysis('retention')
HZ = facts(h, [('c1', 'centered lag cosine c_1'), ('content_horizon_e', 'content horizon h_e (tokens)'),
               ('content_horizon_e_censored', '  right-censored'),
               ('content_horizon_002', 'content horizon h_0.02 (tokens)'),
               ('content_horizon_002_censored', '  right-censored'), ('min_pairs', 'pairs a lag needs to be read')]) if h else {}
RT = facts(r, [('heads', 'memory heads'), ('fast_n', 'fast pool: heads'), ('fast_min', 'fast pool: shortest 1/e time'),
               ('fast_max', 'fast pool: longest 1/e time'), ('slow_n', 'slow pool: heads'),
               ('slow_min', 'slow pool: shortest 1/e time'), ('slow_max', 'slow pool: longest 1/e time'),
               ('pool_lr', 'likelihood ratio, two pools against one (all starts)'),
               ('separation', '  separation of the split')]
               + [(f'pool_lr_null_p_{n}', f'  null p, {n} null') for n in ('normal', 'uniform', 'laplace', 't3', 'init')]
               + [('pool_verdict', '  pool verdict (1 present, 0.5 inconclusive, 0 not demonstrated)'),
                  ('pools_power_paper', "  the rule's power on the paper's pools"),
                  ('pools_power_fitted', "  the rule's power on these fitted pools"),
                  ('pool_lr_from_start', "likelihood ratio (the paper's estimator, from the start)"),
                  ('pool_verdict_from_start', '  pool verdict')]) if r else {}
if h is None and r is None:
    not_analysed('horizons')
elif r is None:
    print(f'run {RUN} has no retention results: a GPN has no memory heads, or `gpnscope analyze` skipped them')
elif h is None:
    not_analysed('horizons')
if h is not None or r is not None:
    fig, ax = plt.subplots(1, 2, figsize=(16, 5))
    if h is not None:
        # a lag is read only with enough pairs (min_pairs); a lag without pairs has no value (NULL)
        mp = HZ.get('min_pairs', 100)
        raw, cen = series(h, 'raw'), series(h, 'centered')
        rp, cp = series(h, 'raw_pairs'), series(h, 'centered_pairs')
        if len(rp) == len(raw): raw = raw[rp.y.values >= mp]
        if len(cp) == len(cen): cen = cen[cp.y.values >= mp]
        ax[0].plot(raw.x, raw.y, 'o-', ms=3, color='tab:blue', label='raw lag cosine')
        ax[0].plot(cen.x, cen.y, 's-', ms=3, color='tab:purple', label="centered (each window's mean removed)")
        if 'c1' in HZ:
            ax[0].axhline(HZ['c1'] / math.e, color='tab:green', ls=':', lw=1, label='c_1 / e')
        ax[0].axhline(0.02, color='tab:red', ls=':', lw=1, label='0.02')
        for key, name, color in (('content_horizon_e', 'h_e', 'tab:green'), ('content_horizon_002', 'h_0.02', 'tab:red')):
            if key in HZ:
                censored = ' (censored)' if HZ.get(key + '_censored') == 1 else ''
                ax[0].axvline(HZ[key], color=color, ls='--', lw=1, label=f'{name} = {HZ[key]:.3g} tokens{censored}')
        ax[0].set_xscale('log')
        ax[0].legend(fontsize=8)
    else:
        ax[0].text(0.5, 0.5, 'no horizons stored', ha='center', va='center', transform=ax[0].transAxes)
    ax[0].set(xlabel='lag k (tokens)', ylabel='mean cos(s_t, s_t+k)', title='(a) state horizon: lag cosine')
    if r is not None:
        hl = series(r, 'e_fold_time')
        if hl.empty:  # stores written before the rename
            hl = series(r, 'half_life')
        cens, pools = series(r, 'censored'), series(r, 'pool')
        pool_of = {int(x): int(y) for x, y in zip(pools.x, pools.y)}
        colors = {0: 'tab:orange', 1: 'tab:blue', None: 'tab:gray'}
        names = {None: 'heads (no pools)'}
        for p, pname in ((0, 'fast'), (1, 'slow')):
            if RT.get(f'{pname}_n') is not None:
                n = int(RT[f'{pname}_n'])
                names[p] = (f"{pname} pool: {n} head{'' if n == 1 else 's'}, "
                            f"{RT[f'{pname}_min']:.3g}-{RT[f'{pname}_max']:.3g} tokens")
        curves, labelled = {}, set()
        heads_in_order = sorted(zip(hl.x.astype(int), hl.y), key=lambda hk: (pool_of.get(hk[0], 2), hk[0]))
        MAX_CURVES = 64  # thousands of curves draw nothing readable (and slowly)
        if len(heads_in_order) > MAX_CURVES:
            print(f'{len(heads_in_order)} heads: the retention curves of the first {MAX_CURVES} (by pool, then head) '
                  'are drawn; the table below has them all')
            heads_in_order = heads_in_order[:MAX_CURVES]
        for head, k in heads_in_order:
            c = series(r, f'R_head{head}').dropna(subset=['x', 'y'])
            if c.empty:
                continue
            p = pool_of.get(head)
            if p not in colors:  # a pool other than fast (0) and slow (1)
                colors[p], names[p] = 'tab:gray', f'pool {p}'
            ax[1].plot(c.x, c.y, color=colors[p], lw=1, alpha=0.7, label=None if p in labelled else names[p])
            labelled.add(p)
            curves.setdefault(p, []).append(c.set_index('x').y)
            if bool((cens.y[cens.x == head] == 1).any()):
                ax[1].plot([c.x.iloc[-1]], [c.y.iloc[-1]], '>', color=colors[p], ms=6)
            else:
                ax[1].plot([k], [1 / math.e], 'o', color=colors[p], ms=5)
        for p, cs in curves.items():
            if p is not None and len(cs) > 1:
                mean = pd.concat(cs, axis=1).mean(axis=1)
                ax[1].plot(mean.index, mean.values, color=colors[p], lw=3, ls='--',
                           label=f"mean of the {'fast' if p == 0 else 'slow'} pool")
        ax[1].axhline(1 / math.e, color='black', ls=':', lw=1, label='1/e (dots: 1/e times; >: censored)')
        ax[1].set_xscale('log')
        ax[1].legend(fontsize=8)
    else:
        ax[1].text(0.5, 0.5, 'no memory heads (GPN) or no retention results', ha='center', va='center',
                   transform=ax[1].transAxes)
    ax[1].set(xlabel='k (steps after the write)', ylabel='retention R_h(k)',
              title='(b) memory retention per head, by pool')
    fig.suptitle(f'Horizons of run {RUN}')
    fig.tight_layout()
    plt.show()
if r is not None:
    table = pd.DataFrame({'head': hl.x.astype(int), 'e_fold_time': hl.y.round(3)})
    for name in ('censored', 'e_fold_time_from_start', 'censored_from_start', 'extrapolated', 'pool',
                 'mean_alpha', 'mean_beta'):
        s = series(r, name)
        if not s.empty and len(s) != len(table):
            print(f"note: series '{name}' has {len(s)} points for {len(table)} heads: left out of the table")
        elif not s.empty:
            table[name] = s.y.values.round(4)
    if 'pool' in table:
        table['pool'] = table['pool'].map({0.0: 'fast', 1.0: 'slow'})
    display(table)

# %% [markdown] md-probe
# ## 6. Probe horizon (beyond the paper)
#
# A second, stronger estimate of how long content stays in the state. For each lag k, ridge regression
# (with intercept, λ = 10⁻² · tr(G) / d) maps the centered state s<sub>t</sub> to the embedding of
# x<sub>t−k</sub>, fitted on 80% of the documents (a seeded split by document when BOS/EOS mark them, by
# window otherwise: windows of one document share its text, and a split by window lets the probe learn the
# held-out text). Held-out positions are decoded to
# the embedding row with the highest cosine, and the top-1 accuracy is compared with the majority-token
# baseline b of the same held-out targets. A lag **passes** when the accuracy exceeds b by more than two
# standard errors of accuracy − b: a cluster-robust error over blocks of 64 consecutive held-out positions
# (never below the binomial √(b(1−b)/n), which treats positions as independent), plus the spread of
# accuracy − b over 5 splits. The **probe horizon** is the largest lag before the first lag that
# fails: 0 when lag 1 fails, right-censored (a lower bound) when no lag fails. Each split's own horizon is
# stored (`horizon_by_split`): read the horizon with its spread.

# %% probe
p = analysis('probe')
if p is None:
    not_analysed('probe', " (the probe needs the run's model)")
else:
    P = facts(p, [('probe_horizon', 'probe horizon (tokens)'), ('probe_horizon_censored', '  right-censored'),
                  ('probe_horizon_min', '  smallest over the splits'), ('probe_horizon_median', '  median over the splits'),
                  ('probe_horizon_max', '  largest over the splits'), ('splits', 'splits'),
                  ('split_by_document', 'split by document (1) or window (0)'), ('test_documents', 'held-out documents'),
                  ('train_windows', 'training windows'), ('test_windows', 'held-out windows')])
    acc, base, ok, nt = series(p, 'accuracy'), series(p, 'baseline'), series(p, 'pass'), series(p, 'n_test')
    fig, ax = plt.subplots(figsize=(8, 4.6))
    ax.plot(acc.x, acc.y, 'o-', color='tab:blue', label='probe top-1 accuracy (held-out windows)')
    ax.plot(base.x, base.y, 's--', color='tab:gray', label='majority-token baseline')
    passed = (ok.y == 1).values
    ax.plot(acc.x[passed], acc.y[passed], 'o', mfc='none', ms=11, color='tab:green', label='passes the rule')
    if P.get('probe_horizon', 0) > 0:
        ax.axvline(P['probe_horizon'], color='tab:green', ls=':', label=f"probe horizon = {P['probe_horizon']:.0f}")
    ax.set_xscale('log', base=2)
    if not acc.empty:
        ax.set_xticks(acc.x)
        ax.set_xticklabels([f'{v:.0f}' for v in acc.x])
        ax.minorticks_off()
    ax.set(xlabel='lag k (tokens back)', ylabel='top-1 accuracy',
           title=f'Probe horizon of run {RUN}: decoding x(t-k) from s_t')
    ax.legend()
    fig.tight_layout()
    plt.show()
    table = pd.DataFrame({'lag': acc.x.astype(int), 'accuracy': acc.y.round(4), 'baseline': base.y.round(4),
                          'passes': passed, 'held-out positions': nt.y.astype(int)})
    se = series(p, 'se')
    if len(se) == len(table):
        table['se (rule)'] = se.y.round(4).values
        table['se binomial'] = series(p, 'se_binomial').y.round(4).values
    display(table)

# %% [markdown] md-findings
# ## 7. The paper's three structures in this run
#
# `gpnscope analyze` checks each of the paper's three findings (the default direction, the content horizon,
# fast and slow memory pools) against stated rules and stores the verdict with its reason (analysis
# `findings`, when this gpnscope has it).

# %% findings
f = analysis('findings')
if f is None:
    print(f'no findings stored for run {RUN}')
else:
    for key, (value, note) in sorted(st.scalars(f, run=RUN, notes=True).items()):
        print(f'{key}: {note or value}')

# %% [markdown] md-causal
# ## 8. Mechanisms: effective attention and logit attribution
#
# `gpnscope attention STORE` writes each memory head's read as exact weights on the earlier writes,
# a_tj = beta_j k_j^T A_{j+1} ... A_t q_t, beside the heuristic that drops key removal; `gpnscope attribute STORE`
# splits each token's logit over the parts of the predicted state (carry, grounded input, FFN, each memory head)
# with the decode norm's scale frozen from the full state (`docs/causal.md`). Per head: how far the heuristic is
# from the exact weights, the exact weights' own check against the engine's read, and a heatmap of one head; then
# the mean logit share of each part.

# %% causal
with reading('attention'):
    at = analysis('attention')
    if at is None:
        print(f'run {RUN} has no attention results: run `gpnscope attention {STORE} --run {RUN}`')
    else:
        display(q('SELECT layer, head, count(*) AS queries, avg(heuristic_l1) AS heuristic_l1,'
                  ' avg(heuristic_error) AS heuristic_read_error, max(read_error) AS exact_read_error,'
                  ' avg(topk_mass) AS topk_mass FROM attention_queries WHERE analysis_id = ?'
                  ' GROUP BY layer, head ORDER BY layer, head', at))
        row = con.execute("SELECT window, layer, head, n, weights FROM attention_matrices WHERE analysis_id = ?"
                          " AND kind = 'exact' ORDER BY window, layer, head LIMIT 1", (at,)).fetchone()
        if row is not None:
            w, layer, head, n, blob = row
            if not isinstance(blob, bytes) or not isinstance(n, int) or n < 1 or len(blob) != 4 * n * n:
                raise StoreProblem(f'attention matrix of window {w}, head {head} is not {n} x {n} float32')
            A = np.frombuffer(blob, dtype='<f4').reshape(n, n)
            m = float(np.abs(A).max()) or 1.0
            fig, ax = plt.subplots(figsize=(6, 5))
            im = ax.imshow(A, cmap='RdBu_r', vmin=-m, vmax=m, interpolation='nearest')
            ax.set_xlabel('key j (write at step j)')
            ax.set_ylabel('query t (read at step t)')
            ax.set_title(f'exact effective attention, layer {layer}, head {head}, window {w}')
            fig.colorbar(im, ax=ax)
            plt.show()
with reading('logit_attribution'):
    la = analysis('logit_attribution')
    if la is None:
        print(f'run {RUN} has no logit attribution: run `gpnscope attribute {STORE} --run {RUN}`')
    else:
        parts = series(la, 'mean').merge(series(la, 'mean_abs'), on=['x', 'label'], suffixes=('_mean', '_abs'))
        display(parts[['label', 'y_mean', 'y_abs']].rename(columns={'label': 'part', 'y_mean': 'mean logit',
                                                                   'y_abs': 'mean |logit|'}))
        print('largest |logit - sum of parts|:', scalars(la).get('residual_max'))

# %% [markdown] md-experiments
# ## 9. Interventions: state patching, steering and the logit lens
#
# `gpnscope patch`, `steer` and `lens` with `--store` write experiments on a model and prompts rather than on a
# recorded run, so this section shows the newest of each kind in the store, whichever run is selected
# (`docs/causal.md`; tables in `docs/schema.md`, "Causal experiments"). Patching: the mean score
# (LD - LD_corrupted) / (LD_clean - LD_corrupted) per component and position, 0 for the corrupted run and 1 for
# the clean one, the positions labelled by the first pair's clean prompt. Steering: the held-out NLL change and
# the share of changed top-1 predictions against c. The lens: each site's top token at each position.

# %% experiments
def experiment(kind):
    """The newest experiment of a kind ('patch', 'steer', 'lens') as (id, model, input, settings), or None."""
    if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'causal_experiments'").fetchone() is None:
        return None
    row = con.execute('SELECT id, model_path, input_path, settings FROM causal_experiments WHERE kind = ?'
                      ' ORDER BY id DESC LIMIT 1', (kind,)).fetchone()
    if row is None:
        return None
    try:
        settings = json.loads(row[3]) if row[3] else {}
    except (TypeError, ValueError):
        settings = None
    if not isinstance(settings, dict):
        raise StoreProblem(f'the settings of {kind} experiment {row[0]} are not a JSON object: {str(row[3])[:80]!r}')
    print(f'{kind} experiment {row[0]}: model {row[1]!r}, input {row[2]!r}')
    return row[0], row[1], row[2], settings

def no_experiment(kind, how):
    print(f'no {kind} experiment in {STORE}: run `gpnscope {kind} {how} --store {STORE}`, then execute this notebook again')

with reading('patch'):
    ex = experiment('patch')
    if ex is None:
        no_experiment('patch', 'MODEL PAIRS.jsonl')
    else:
        eid, settings = ex[0], ex[3]
        display(q('SELECT count(*) AS pairs, avg(ld_clean) AS mean_ld_clean, avg(ld_corrupted) AS mean_ld_corrupted'
                  ' FROM patch_baselines WHERE experiment_id = ?', eid))
        ps = q('SELECT component_index, component, position, mean_score FROM patch_summary WHERE experiment_id = ?'
               ' ORDER BY component_index, position', eid)
        if ps.empty:
            raise StoreProblem(f'patch experiment {eid} has no results')
        ps['mean_score'] = pd.to_numeric(ps['mean_score'], errors='coerce')  # NULL: every pair's runs agreed
        T = int(ps.position.max()) + 1
        toks = settings.get('clean_tokens')
        toks = [str(t) for t in toks] if isinstance(toks, list) and len(toks) >= T else None
        names = ps.drop_duplicates('component_index').set_index('component_index')['component']
        grid = ps.pivot(index='component_index', columns='position', values='mean_score')
        grid = grid.reindex(columns=list(range(T)) + [-1])
        grid.index = [names[i] for i in grid.index]
        grid.columns = [f'{p} {toks[p]}' if toks else str(p) for p in range(T)] + ['all']
        with pd.option_context('display.float_format', '{:.3f}'.format):
            display(grid)
        fig, ax = plt.subplots(figsize=(max(5, 0.6 * (T + 1) + 3), max(2.5, 0.35 * len(grid) + 1.5)))
        im = ax.imshow(grid.values.astype(float), cmap='RdBu', vmin=-1.2, vmax=1.2, aspect='auto', interpolation='nearest')
        ax.set_xticks(range(T + 1))
        ax.set_xticklabels(grid.columns, rotation=90)
        ax.set_yticks(range(len(grid)))
        ax.set_yticklabels(grid.index)
        if grid.size <= 600:
            for (i, j), v in np.ndenumerate(grid.values.astype(float)):
                if not math.isnan(v):
                    ax.text(j, i, f'{v:.2f}', ha='center', va='center', fontsize=7)
        ax.set_xlabel('position patched' + (", labelled by pair 0's clean prompt" if toks else '') + ' (all: every position)')
        ax.set_title('state patching: mean score (0 corrupted, 1 clean)')
        ax.grid(False)
        fig.colorbar(im, ax=ax)
        plt.show()

with reading('steer'):
    ex = experiment('steer')
    if ex is None:
        no_experiment('steer', 'MODEL --corpus C --direction D --c LIST')
    else:
        eid, settings = ex[0], ex[3]
        print('settings:', ', '.join(f'{k} {v}' for k, v in settings.items()))
        sr = q('SELECT c, n_tokens, nll, delta_nll, top1_changed, top_tokens FROM steer_results'
               ' WHERE experiment_id = ? ORDER BY c', eid)
        if sr.empty:
            raise StoreProblem(f'steer experiment {eid} has no results')
        def tops(raw):
            try:
                return ' '.join(f"{t.get('piece') or '#' + str(t.get('id'))} {t.get('share', 0):.2f}" for t in json.loads(raw))
            except (TypeError, ValueError, AttributeError):
                return ''
        sr['top-1 predictions'] = [tops(t) for t in sr.pop('top_tokens')]
        display(sr)
        for col in ('c', 'delta_nll', 'top1_changed'):
            sr[col] = pd.to_numeric(sr[col], errors='coerce')
        fig, ax = plt.subplots(figsize=(6.5, 4))
        ax.plot(sr.c, sr.delta_nll, 'o-', color='C0', label='NLL change')
        ax.set_xlabel('c (added c u, u of unit length)')
        ax.set_ylabel('held-out NLL change (nats/token)')
        ax2 = ax.twinx()
        ax2.plot(sr.c, sr.top1_changed, 's--', color='C1', label='top-1 changed')
        ax2.set_ylabel('share of top-1 predictions changed')
        ax2.set_ylim(0, 1)
        fig.legend(loc='upper center')
        ax.set_title(f"steering along {settings.get('direction', '?')}")
        plt.show()

with reading('lens'):
    ex = experiment('lens')
    if ex is None:
        no_experiment('lens', 'MODEL --text TEXT')
    else:
        eid = ex[0]
        lt = q('SELECT site, position, token_id, logit, piece FROM lens_tokens WHERE experiment_id = ? AND rank = 0'
               ' ORDER BY site, position', eid)
        if lt.empty:
            raise StoreProblem(f'lens experiment {eid} has no results')
        lt['top'] = [p if isinstance(p, str) else f'#{t}' for t, p in zip(lt.token_id, lt.piece)]
        print('the top token of each site\'s decode (rows) at each position (columns):')
        with pd.option_context('display.max_columns', 64):
            display(lt.pivot(index='site', columns='position', values='top'))

# %% [markdown] md-other
# ## 10. Other results: causal ablations and later analyses
#
# The paper did not measure the perplexity impact of ablating the mean direction or the slow-pool memory
# heads (`docs/paper-analyses.md`, section 4). Results of analyses this notebook does not know yet (such as
# ablations) are listed here by name, with their scalars and series. An ablation stores its 95% t-intervals
# over documents (`*_ci_low`, `*_ci_high`; `n_units` documents), its NLL change by position with position 1
# alone (its state is zero), matched random controls (`control_<kind>_*`: isotropic and state-drawn
# directions of the same norm, or random head sets of the same size) with the effect beyond them, and,
# for head ablations, whether the heads were zeroed before or after the read's output norm (`after_norm`).

# %% other
known = {'geometry', 'default_direction', 'horizons', 'retention', 'probe', 'findings', 'attention',
         'logit_attribution'}
others = con.execute('SELECT id, name FROM analyses WHERE run_id = ? ORDER BY id', (RUN,)).fetchall()
others = [(i, n) for i, n in others if n not in known]
if not others:
    print(f'no other analyses stored for run {RUN}')
for aid, name in others:
    print(f'analysis {aid}: {name}')
    display(q('SELECT key, value, note FROM analysis_scalars WHERE analysis_id = ? ORDER BY key', aid))
    display(q('SELECT series, count(*) AS points, min(x) AS x_min, max(x) AS x_max FROM analysis_series'
              ' WHERE analysis_id = ? GROUP BY series ORDER BY series', aid))

# %% [markdown] md-all
# ## 11. Every stored number
#
# The view `analysis_values` lists every scalar of every analysis of the run, with how it was computed.

# %% all-values
with pd.option_context('display.max_rows', 500, 'display.max_colwidth', 70):
    display(q('SELECT analysis, key, value, note FROM analysis_values WHERE run_id = ? ORDER BY analysis, key', RUN))

# %% [markdown] md-numpy
# ## 12. The states in numpy, for your own analysis
#
# The states the geometry analysis read, as a matrix (`st.states(site, index=True)` of the gpnscope package
# gives float32 rows with their windows and positions; float16 states are widened), and two of its numbers computed
# again with numpy from that matrix. They agree with the stored ones to rounding: the analysis used the
# first `max_states` states in (window, position) order after `skip_positions`. A run with d = 2496 and 16384
# states makes a 160 MB matrix (320 MB in double).

# %% numpy
S = None
if g is not None:
    raw = next(a['settings'] for a in st.analyses(run=RUN) if a['analysis_id'] == g)
    try:
        settings = json.loads(raw)
    except (TypeError, ValueError):
        settings = None
    if not isinstance(settings, dict):
        raise StoreProblem(f'the settings of analysis {g} (geometry) are not a JSON object: {str(raw)[:80]!r}')
    kind = settings.get('kind', 'pred')
    site = next((x['site'] for x in st.sites(run=RUN) if x.get('stored_as') == kind), kind)
    rows, windows, positions = st.states(site, run=RUN, index=True)  # float32, (window, position) order
    S = rows[positions >= settings.get('skip_positions', 0)][:settings.get('max_states', 0) or None].astype(np.float64)
    C = np.cov(S, rowvar=False)
    pr = np.trace(C) ** 2 / np.sum(C * C)
    mean_norm = np.linalg.norm(S, axis=1).mean()
    print(f'S: {S.shape[0]} states x {S.shape[1]} dimensions')
    for label, mine, key in (('norm mean', mean_norm, 'norm_mean'), ('participation ratio', pr, 'participation_ratio')):
        if key in G:
            rel = abs(mine - G[key]) / abs(G[key])
            print(f'{label:<20} numpy {mine:.10g}   stored {G[key]:.10g}   relative difference {rel:.1e}')
else:
    not_analysed('geometry')

# %% [markdown] md-further
# ## Going further
#
# - More questions in SQL: `docs/sql.md`, and `gpnscope sql STORE "QUERY"` with the vector functions loaded.
# - The engine from Python (`docs/python.md`): `gpnscope.load(MODEL).run_with_cache(tokens)` gives every site as
#   numpy, `run_with_hooks` patches or steers from Python, and `gpnscope.Store` (`st` above) reads this store.
# - The data as files: `gpnscope export STORE --out DIR --format csv` writes the tokens (with their text), head
#   steps, states and analysis results as CSV tables; `--format npy` writes the state matrix
#   (`states_pred.npy`, shape (n_states, d), with `states_pred_window.npy` and `states_pred_position.npy`) and
#   the head arrays (`alpha.npy`, `beta.npy`, `mem_norm.npy`, shape (n_windows, T, H)) for `numpy.load`.
# - Figures for papers: `gpnscope plot STORE --out DIR` writes editable gnuplot scripts of the same figures.
# - Definitions: `docs/analyses.md` (how gpnscope computes each quantity) and `docs/paper-analyses.md` (the
#   paper's definitions and figures).
