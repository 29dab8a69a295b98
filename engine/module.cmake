# engine extras: OpenMP spreads the per-sequence memory loops over the cores
# (the GEMMs are threaded by OpenBLAS itself). Optional: without it the loops
# run on one core.
find_package(OpenMP COMPONENTS C)
if(OpenMP_C_FOUND)
  target_link_libraries(gs_engine PUBLIC OpenMP::OpenMP_C)
else()
  message(STATUS "gpnscope: OpenMP not found; memory loops run single-threaded")
endif()

# trainer kernels: -O3 so GCC vectorizes the elementwise loops of unknown
# length (GCC 12's -O2 cost model does not); AVX2/AVX-512 clones are picked
# at load time inside the file (target_clones)
set_source_files_properties(${CMAKE_SOURCE_DIR}/engine/train_kernels.c ${CMAKE_SOURCE_DIR}/engine/adamw.c
  PROPERTIES COMPILE_OPTIONS "-O3")
