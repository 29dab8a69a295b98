# engine extras: OpenMP spreads the per-sequence memory loops over the cores
# (the GEMMs are threaded by OpenBLAS itself). Optional: without it the loops
# run on one core.
find_package(OpenMP COMPONENTS C)
if(OpenMP_C_FOUND)
  target_link_libraries(gs_engine PUBLIC OpenMP::OpenMP_C)
else()
  message(STATUS "gpnscope: OpenMP not found; memory loops run single-threaded")
endif()
