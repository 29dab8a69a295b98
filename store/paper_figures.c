#include "store/paper_figures.h"

static const gs_paper_figure figures[GS_PAPER_COUNT] = {
    [GS_PAPER_STATES] = {"states", "16k states, 2048-token windows, d = 2496"},
    [GS_PAPER_NORM] = {"norm mean / std", "132 / 9"},
    [GS_PAPER_DIM_STD] = {"per-dim std", "min 1.05, max 11.3"},
    [GS_PAPER_DEAD_DIMS] = {"dead dims", "0"},
    [GS_PAPER_CORRELATION] = {"off-diagonal |corr| mean, max", "0.027, 0.61"},
    [GS_PAPER_PCA] = {"PCA components for 90% / 99%", "1131 and 2099 of 2496"},
    [GS_PAPER_STABLE_RANK] = {"stable rank", "40"},
    [GS_PAPER_PARTICIPATION] = {"participation ratio", "398"},
    [GS_PAPER_MEAN_NORM] = {"||s_bar||", "107 = 0.81 of its mean norm 132 (its text's \"58%\" does not follow)"},
    [GS_PAPER_BATCH_COSINE] = {"cross-batch cos, consecutive windows", "0.988 +- 0.005"},
    [GS_PAPER_DEFAULT_TOKENS] = {"default tokens (top 10)", "\",\" \" and\" \" the\" \" in\" \" to\" \" a\" ..."},
    [GS_PAPER_SPEARMAN] = {"Spearman vs training-corpus unigrams", "+0.46"},
    [GS_PAPER_EMBEDDING_CONTROL] = {"embedding control", "0/10 overlap; cosine -0.62"},
    [GS_PAPER_EMERGENCE] = {"emergence cos(m_t, s_bar)", "0.98 at 10, 0.996 at 100"},
    [GS_PAPER_TOP_PC] = {"cos(s_bar, uncentered top sing. vec)", "s_bar is the top PC"},
    [GS_PAPER_RAW_LAG] = {"raw lag cosine", "plateau near 0.65 out to k = 1500"},
    [GS_PAPER_CENTERED_LAG] = {"centered lag cosine", "0.31 at k = 1, about 0 by k = 256"},
    [GS_PAPER_HORIZON_E] = {"content horizon (c_1/e)", "-"},
    [GS_PAPER_HORIZON_002] = {"content horizon (< 0.02)", "-"},
    [GS_PAPER_HEADS] = {"heads", "15"},
    [GS_PAPER_FAST_POOL] = {"fast pool", "6 heads at 1-3 tokens"},
    [GS_PAPER_SLOW_POOL] = {"slow pool", "9 heads at 5-322 tokens"},
    [GS_PAPER_SEPARATION] = {"separation score", "-"},
    [GS_PAPER_POOL_LR] = {"pools likelihood ratio", "-"},
    [GS_PAPER_PROBE_HORIZON] = {"probe horizon", "not measured"},
};

const gs_paper_figure *gs_paper(gs_paper_quantity q) {
    static const gs_paper_figure none = {"?", "-"};
    return q < GS_PAPER_COUNT ? &figures[q] : &none;
}
