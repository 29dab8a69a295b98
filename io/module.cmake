# io extras.

# PyTorch zip checkpoints (io/checkpoint/torch_zip.c) through libzip.
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
target_link_libraries(gs_io PUBLIC PkgConfig::LIBZIP)
