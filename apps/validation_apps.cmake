# validate, calibrate and nccl-replay (the last only where CUDA and NCCL are found).
add_executable(validate validate.cc)
target_link_libraries(validate PRIVATE dtsim::validation dtsim::runner CLI11::CLI11 dtsim_warnings fmt::fmt)

add_executable(calibrate calibrate.cc)
target_link_libraries(calibrate PRIVATE dtsim::validation CLI11::CLI11 dtsim_warnings fmt::fmt)

add_subdirectory(nccl_replay)
