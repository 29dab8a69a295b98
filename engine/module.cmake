# engine extras. No OpenMP: its worker threads spin next to OpenBLAS's on
# small machines and made steps several times slower (measured while writing
# the trainer); the per-sequence memory loops run on the calling thread.

# trainer kernels: -O3 so GCC vectorizes the elementwise loops of unknown
# length (GCC 12's -O2 cost model does not); AVX2/AVX-512 clones are picked
# at load time inside the file (target_clones); each family's tape
# (engine/arch/<family>/<family>_train.c, found by name, so a new family's
# tape gets them with no line here) and the shared ops it calls
file(GLOB family_tapes CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/engine/arch/*/*_train.c)
set_source_files_properties(${family_tapes} ${CMAKE_SOURCE_DIR}/engine/tape/train_ops.c ${CMAKE_SOURCE_DIR}/train/adamw.c
  PROPERTIES COMPILE_OPTIONS "-O3")
# and the engine's forward ops (the memory write/read loops, the logits' exp);
# -fno-trapping-math lets GCC turn the selects of exp_nonpositive into blends
# (nothing here uses floating-point traps)
set_source_files_properties(${CMAKE_SOURCE_DIR}/engine/cpu/ops.c PROPERTIES COMPILE_OPTIONS "-O3;-fno-trapping-math")
# and GDN's delta rule (engine/arch/gdn/gdn_delta.c, called by gdn_cpu.c), the same loops over each head's state,
# and the window path's chunked form and row loops (gdn_chunk.c, gdn_window.c)
set_source_files_properties(${CMAKE_SOURCE_DIR}/engine/arch/gdn/gdn_cpu.c ${CMAKE_SOURCE_DIR}/engine/arch/gdn/gdn_delta.c
  ${CMAKE_SOURCE_DIR}/engine/arch/gdn/gdn_chunk.c ${CMAKE_SOURCE_DIR}/engine/arch/gdn/gdn_window.c
  PROPERTIES COMPILE_OPTIONS "-O3;-fno-trapping-math")

# The CUDA engine: a plugin (gpnscope_cuda.so next to gpnscope) that
# cuda_loader.c opens on first use, so CPU runs never load cuBLAS.
target_link_libraries(gs_engine PUBLIC ${CMAKE_DL_LIBS})
if(GPNSCOPE_WITH_CUDA)
  # the kernels (engine/cuda/) and the families' CUDA steps (engine/arch/<family>/*.cu: GPN's)
  file(GLOB cuda_srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/engine/cuda/*.cu ${CMAKE_SOURCE_DIR}/engine/arch/*/*.cu)
  add_library(gpnscope_cuda MODULE ${cuda_srcs})
  target_include_directories(gpnscope_cuda PRIVATE ${CMAKE_SOURCE_DIR})
  target_compile_options(gpnscope_cuda PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings;-Xcompiler=-Wall,-Wextra,-Werror,-Wno-format-truncation,-fvisibility=hidden>")
  target_link_libraries(gpnscope_cuda PRIVATE gs_base CUDA::cublas CUDA::cudart)
  set_target_properties(gpnscope_cuda PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  target_compile_definitions(gs_engine PRIVATE GPNSCOPE_CUDA_PLUGIN="$<TARGET_FILE:gpnscope_cuda>" PUBLIC GPNSCOPE_WITH_CUDA)
  add_dependencies(gs_engine gpnscope_cuda)
endif()
