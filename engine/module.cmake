# engine extras. No OpenMP: its worker threads spin next to OpenBLAS's on
# small machines and made steps several times slower (measured while writing
# the trainer); the per-sequence memory loops run on the calling thread.

# trainer kernels: -O3 so GCC vectorizes the elementwise loops of unknown
# length (GCC 12's -O2 cost model does not); AVX2/AVX-512 clones are picked
# at load time inside the file (target_clones)
set_source_files_properties(${CMAKE_SOURCE_DIR}/engine/train_kernels.c ${CMAKE_SOURCE_DIR}/engine/adamw.c
  PROPERTIES COMPILE_OPTIONS "-O3")
