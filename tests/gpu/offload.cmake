# tests/gpu/offload.cmake: the GPU tests of offload into regions (src/gpu), included by
# src/gpu/CMakeLists.txt (where nvcc gets no gcc flags). Where no CUDA device is present they
# exit 77 and ctest reports them skipped.
#   gpu_test_offload      one process, arenas over host memory standing in for the GAS
#                         (no MPI job): land and walk, open, exhaustion, freed ranges, misuse
#   gpu_test_offload_mpi  two workers and a scheduler (ranks on one GPU or one each): lists and
#                         trees sent between workers, walked on CPUs and GPUs, sys_rfree of
#                         registered regions; registered with mpirun by tests/mpi
set(AH_GPU_TESTS ${CMAKE_SOURCE_DIR}/tests/gpu)
gpu_executable(gpu_test_offload ${AH_GPU_TESTS}/test_offload.cu LIBS ah_gpu_arena)
target_include_directories(gpu_test_offload PRIVATE ${AH_GPU_TESTS})
add_test(NAME gpu_test_offload COMMAND gpu_test_offload)
set_tests_properties(gpu_test_offload PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS gpu)

gpu_executable(gpu_test_offload_mpi ${AH_GPU_TESTS}/test_offload_mpi.cu LIBS antheap_gpu)
target_include_directories(gpu_test_offload_mpi PRIVATE ${AH_GPU_TESTS})
