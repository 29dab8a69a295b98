# The page's script and style (view/page.js, view/page.css) embedded into
# gs_view at build time (cmake/embed.cmake), so they stay plain files to edit.
set(GS_VIEW_GEN ${CMAKE_BINARY_DIR}/generated/view)
add_custom_command(
  OUTPUT ${GS_VIEW_GEN}/view_assets.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${GS_VIEW_GEN}
  COMMAND ${CMAKE_COMMAND} -DOUT=${GS_VIEW_GEN}/view_assets.h "-DNAMES=gs_view_page_css\\;gs_view_page_js"
          "-DFILES=${CMAKE_SOURCE_DIR}/view/page.css\\;${CMAKE_SOURCE_DIR}/view/page.js" -P ${CMAKE_SOURCE_DIR}/cmake/embed.cmake
  DEPENDS ${CMAKE_SOURCE_DIR}/view/page.css ${CMAKE_SOURCE_DIR}/view/page.js ${CMAKE_SOURCE_DIR}/cmake/embed.cmake
  COMMENT "embedding the view page's script and style")
add_custom_target(gs_view_assets DEPENDS ${GS_VIEW_GEN}/view_assets.h)
add_dependencies(gs_view gs_view_assets)
target_include_directories(gs_view PRIVATE ${CMAKE_BINARY_DIR}/generated)
