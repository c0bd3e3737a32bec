# `sweep` (apps/sweep.cc). Built with Open MPI when it is found, for `sweep --mpi` under mpirun.
find_package(MPI COMPONENTS CXX QUIET)
add_executable(sweep sweep.cc)
target_link_libraries(sweep PRIVATE dtsim::runner dtsim::report_views dtsim::report_sweep dtsim::config_sweep
  dtsim::config dtsim::runner_progress CLI11::CLI11 dtsim_warnings)
if(MPI_CXX_FOUND)
  target_compile_definitions(sweep PRIVATE DTSIM_HAVE_MPI=1)
  target_link_libraries(sweep PRIVATE MPI::MPI_CXX)
endif()
set(DTSIM_SWEEP_HAVE_MPI ${MPI_CXX_FOUND} CACHE INTERNAL "sweep was built with MPI")
message(STATUS "dtsim: sweep --mpi ${MPI_CXX_FOUND}")
