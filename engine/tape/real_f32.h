/* Instantiates the REAL templates (*.inc) that follow in float32 for the
 * trainer (SGEMM, the vectorized exp and cross-entropy row); end the block
 * with real_end.h. No include guard: a file includes it once per block. */
#define REAL float
#define SFX f32
#define GEMM cblas_sgemm
#define GEMV cblas_sgemv
#define GER cblas_sger
#define EXP expf
#define FEXP fast_expf
#define LOG logf
#define LOG1P log1pf
#define SQRT sqrtf
#define XENT_ROW xent_row_f32
