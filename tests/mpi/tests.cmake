# SPDX-License-Identifier: BSD-3-Clause
# The MPI tests, included from the top CMakeLists.txt when MPI is found.

# bsr_mpi_test(NAME NP EXE TARGET | COMMAND ... [ENV e1;e2] [TIMEOUT s]):
# TARGET run on NP ranks by mpiexec (or COMMAND as it is), with OpenMPI
# allowed more ranks than cores and to run as root (CI containers), the
# source tree in BSR_SOURCE_DIR, ENV added; 77 means skipped.  Under ASan
# OpenMPI's allocations, kept until exit, are suppressed by library name.
function(bsr_mpi_test name np)
  cmake_parse_arguments(T "" "EXE;TIMEOUT" "COMMAND;ENV" ${ARGN})
  if(T_EXE)
    set(T_COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
        $<TARGET_FILE:${T_EXE}> ${MPIEXEC_POSTFLAGS})
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  add_test(NAME ${name} COMMAND ${T_COMMAND})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;BSR_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    SKIP_RETURN_CODE 77 TIMEOUT ${T_TIMEOUT} PROCESSORS ${np})
  if(T_ENV)
    set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT ${T_ENV})
  endif()
  if(BSR_ASAN)
    set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
      "OMPI_MCA_mca_base_component_disable_dlclose=1;LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/mpi/lsan.supp;ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0")
  endif()
endfunction()

add_library(bsrtest_mpi STATIC tests/mpi/harness_mpi.c)
target_link_libraries(bsrtest_mpi PUBLIC bsrtest)
target_include_directories(bsrtest_mpi PUBLIC tests/mpi)
# the suites; test_dist and test_dist_ipc reach the failure-injection hook
foreach(t test_dist test_dist_io test_dist_ipc test_dist_threads)
  add_executable(${t} tests/mpi/${t}.c)
  target_link_libraries(${t} PRIVATE bsrtest_mpi)
endforeach()
target_include_directories(test_dist PRIVATE src/mpi)
target_include_directories(test_dist_ipc PRIVATE src/mpi)
# one OpenMP thread per rank
foreach(np 1 2 4)
  bsr_mpi_test(dist_np${np} ${np} EXE test_dist ENV OMP_NUM_THREADS=1)
  bsr_mpi_test(dist_io_np${np} ${np} EXE test_dist_io ENV OMP_NUM_THREADS=1)
endforeach()
# the halo paths: the profile on the CPU, and with 2 GPUs or more the CUDA
# IPC and NCCL halos against the host one (skipped, saying so, with fewer);
# _nonccl: NCCL looked for where it is not, the host path instead
foreach(np 2 4)
  bsr_mpi_test(dist_ipc_np${np} ${np} EXE test_dist_ipc ENV OMP_NUM_THREADS=1)
endforeach()
bsr_mpi_test(dist_ipc_np2_nonccl 2 EXE test_dist_ipc
             ENV "OMP_NUM_THREADS=1;BSR_NCCL_LIBRARY=/nonexistent/libnccl.so.2")
# the ranks of a node share its CPUs (bsr_dist_create): without
# OMP_NUM_THREADS (unset even when ctest's caller has it), and with it
# (left alone); ranks not bound to cores, so that each sees every CPU
foreach(np 2 4)
  bsr_mpi_test(dist_threads_np${np} ${np} EXE test_dist_threads TIMEOUT 300
               ENV OMPI_MCA_hwloc_base_binding_policy=none)
  set_property(TEST dist_threads_np${np} PROPERTY ENVIRONMENT_MODIFICATION "OMP_NUM_THREADS=unset:;BSR_EXPECT_THREADS=unset:")
  bsr_mpi_test(dist_threads_np${np}_omp3 ${np} EXE test_dist_threads TIMEOUT 300
               ENV "OMPI_MCA_hwloc_base_binding_policy=none;OMP_NUM_THREADS=3;BSR_EXPECT_THREADS=3")
endforeach()
# the distributed CLI: a plain program that runs `mpiexec -n NP bsrsolve ...`;
# OpenMPI kills the other ranks once one exits nonzero (every rank does, with
# the same code): without its 1 s grace before SIGKILL
add_executable(test_dist_cli tests/mpi/test_dist_cli.c)
target_link_libraries(test_dist_cli PRIVATE bsrtest)
foreach(np 2 4)
  bsr_mpi_test(dist_cli_np${np} ${np} COMMAND test_dist_cli
               ENV "OMPI_MCA_odls_base_sigkill_timeout=0;OMP_NUM_THREADS=1;BSR_CLI=$<TARGET_FILE:bsrsolve_cli>;BSR_MPIEXEC=${MPIEXEC_EXECUTABLE};BSR_NP=${np}")
endforeach()
