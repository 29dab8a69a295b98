/* The paper's figures for its trained 1-layer GPN+M (130M parameters,
 * d = 2496), as docs/paper-analyses.md quotes them: the "paper" column beside
 * our numbers in the report that analyses/ prints and in the one plots/
 * renders. They live here, below both (docs/design.md: plots/ may not
 * include analyses/), so that the two reports cannot drift apart; with the
 * names of the results in the store, they are the vocabulary the two share.
 * docs/analyses.md and the notebooks quote them in prose. */
#ifndef GS_STORE_PAPER_FIGURES_H
#define GS_STORE_PAPER_FIGURES_H

typedef enum {
    GS_PAPER_STATES,
    GS_PAPER_NORM,
    GS_PAPER_DIM_STD,
    GS_PAPER_DEAD_DIMS,
    GS_PAPER_CORRELATION,
    GS_PAPER_PCA,
    GS_PAPER_STABLE_RANK,
    GS_PAPER_PARTICIPATION,
    GS_PAPER_MEAN_NORM,
    GS_PAPER_BATCH_COSINE,
    GS_PAPER_DEFAULT_TOKENS,
    GS_PAPER_SPEARMAN,
    GS_PAPER_EMBEDDING_CONTROL,
    GS_PAPER_EMERGENCE,
    GS_PAPER_TOP_PC,
    GS_PAPER_RAW_LAG,
    GS_PAPER_CENTERED_LAG,
    GS_PAPER_HORIZON_E,
    GS_PAPER_HORIZON_002,
    GS_PAPER_HEADS,
    GS_PAPER_FAST_POOL,
    GS_PAPER_SLOW_POOL,
    GS_PAPER_SEPARATION,
    GS_PAPER_POOL_LR,
    GS_PAPER_PROBE_HORIZON,
    GS_PAPER_COUNT
} gs_paper_quantity;

typedef struct {
    const char *label; /* the quantity, as both reports name it */
    const char *paper; /* the paper's figure ("-": the paper gives none) */
} gs_paper_figure;

/* The row for q (q < GS_PAPER_COUNT). */
const gs_paper_figure *gs_paper(gs_paper_quantity q);

#endif
