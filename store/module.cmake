# The vector SQL functions as a loadable SQLite extension:
#   sqlite3 study.db '.load build/gpnscope_vec'        (sqlite3 shell)
#   con.enable_load_extension(True); con.load_extension('build/gpnscope_vec')  (Python)
# Built from the same source as the functions inside gs_store, compiled
# against sqlite3ext.h (GS_VEC_EXTENSION), with only the entry point exported.
add_library(gpnscope_vec SHARED
  ${CMAKE_SOURCE_DIR}/store/vec_sql.c
  ${CMAKE_SOURCE_DIR}/base/half.c)
target_compile_definitions(gpnscope_vec PRIVATE GS_VEC_EXTENSION)
target_include_directories(gpnscope_vec PRIVATE ${CMAKE_SOURCE_DIR} ${SQLite3_INCLUDE_DIRS})
target_link_libraries(gpnscope_vec PRIVATE m)
set_target_properties(gpnscope_vec PROPERTIES
  PREFIX "" OUTPUT_NAME gpnscope_vec
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
  C_VISIBILITY_PRESET hidden)
if(GPNSCOPE_SANITIZE)
  # Loaded into processes built without sanitizers (python3, the sqlite3
  # shell), so it must not need the ASan runtime; the same code is checked
  # under the sanitizers inside gs_store by the unit tests.
  target_compile_options(gpnscope_vec PRIVATE -fno-sanitize=all)
  target_link_options(gpnscope_vec PRIVATE -fno-sanitize=all)
endif()
# The tests load it, so build it with everything else.
add_dependencies(gs_store gpnscope_vec)
