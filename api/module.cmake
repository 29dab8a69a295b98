# libgpnscope.so (api/gpnscope.h, docs/python.md): the gs_api module and
# every library it uses in one shared object in the build folder, exporting
# only the gs_api_* functions (api/exports.map), for python/gpnscope (ctypes).
# The module libraries are position-independent (gpnscope_module).
if(NOT GPNSCOPE_FUZZ)
  add_library(gpnscope_shared SHARED $<TARGET_OBJECTS:gs_api>)
  target_link_libraries(gpnscope_shared PRIVATE gs_probes gs_store gs_engine gs_base ${CJSON_LIBRARY})
  target_link_options(gpnscope_shared PRIVATE -Wl,--version-script=${CMAKE_SOURCE_DIR}/api/exports.map -Wl,--no-undefined)
  set_target_properties(gpnscope_shared PROPERTIES
    OUTPUT_NAME gpnscope
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
    LINK_DEPENDS ${CMAKE_SOURCE_DIR}/api/exports.map)
endif()
