# The study notebook's cells (notebooks-export/study.py, a Python file in the
# percent format) embedded into gs_notebooks at build time (cmake/embed.cmake),
# so the notebook stays a plain Python file to edit, run and lint.
set(GS_NB_GEN ${CMAKE_BINARY_DIR}/generated/notebooks-export)
add_custom_command(
  OUTPUT ${GS_NB_GEN}/study_py.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${GS_NB_GEN}
  COMMAND ${CMAKE_COMMAND} -DOUT=${GS_NB_GEN}/study_py.h -DNAMES=gs_nb_study_py
          -DFILES=${CMAKE_SOURCE_DIR}/notebooks-export/study.py -P ${CMAKE_SOURCE_DIR}/cmake/embed.cmake
  DEPENDS ${CMAKE_SOURCE_DIR}/notebooks-export/study.py ${CMAKE_SOURCE_DIR}/cmake/embed.cmake
  COMMENT "embedding the study notebook's cells")
add_custom_target(gs_nb_study DEPENDS ${GS_NB_GEN}/study_py.h)
add_dependencies(gs_notebooks gs_nb_study)
target_include_directories(gs_notebooks PRIVATE ${CMAKE_BINARY_DIR}/generated)
