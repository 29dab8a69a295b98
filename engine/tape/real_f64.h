/* Instantiates the REAL templates (*.inc) that follow in float64 for the
 * gradient checks (DGEMM, libm exp); end the block with real_end.h. */
#define REAL double
#define SFX f64
#define GEMM cblas_dgemm
#define GEMV cblas_dgemv
#define GER cblas_dger
#define EXP exp
#define FEXP exp
#define LOG log
#define LOG1P log1p
#define SQRT sqrt
#define XENT_ROW xent_row_f64
