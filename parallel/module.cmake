# The job's two implementations: job_mpi.c (MPI) when CMake's FindMPI found
# one, else job_serial.c (one rank). The other stays out of the build.
if(GPNSCOPE_WITH_MPI)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/parallel/job_serial.c PROPERTIES HEADER_FILE_ONLY ON)
  target_link_libraries(gs_parallel PUBLIC MPI::MPI_C)
  target_compile_definitions(gs_parallel PUBLIC GPNSCOPE_WITH_MPI)
else()
  set_source_files_properties(${CMAKE_SOURCE_DIR}/parallel/job_mpi.c PROPERTIES HEADER_FILE_ONLY ON)
endif()
