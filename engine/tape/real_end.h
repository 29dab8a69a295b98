/* Ends a real_f32.h / real_f64.h block. */
#undef REAL
#undef SFX
#undef GEMM
#undef GEMV
#undef GER
#undef EXP
#undef FEXP
#undef LOG
#undef LOG1P
#undef SQRT
#undef XENT_ROW
