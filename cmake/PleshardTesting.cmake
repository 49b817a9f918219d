# pleshard_add_test(NAME sources... [GPU]): a GoogleTest executable run as one process.
# pleshard_add_mpi_test(NAME sources... RANKS n... [WILL_FAIL] [GPU]): one executable, one ctest
# per rank count, launched through MPIEXEC_* with PROCESSORS and a TIMEOUT backstop.
# GPU: the test runs on the GPU where there is one (pleshard_uses_gpu).

set(PLESHARD_TEST_TIMEOUT 300 CACHE STRING "Per-test timeout in seconds (a backstop)")

# Root in containers and 2-core machines need these to run more ranks than cores.
set(PLESHARD_MPIEXEC_EXTRA_FLAGS "--oversubscribe" CACHE STRING "Extra mpiexec flags for tests")

# What every test's processes see (pleshard_test_environment): Open MPI as root (containers,
# CI); its ob1 messaging (shared memory on one machine) rather than UCX, whose start-up probes
# took about 0.2 s of each process's MPI_Init on a 2-core machine; and a command run without
# mpirun not starting a server process of its own (another 0.15 s). The suite starts many
# processes: app_ckpt_roundtrip alone went from 36 s to 8 s. Other MPIs ignore these.
set(PLESHARD_TEST_ENVIRONMENT OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
    OMPI_MCA_ess_singleton_isolated=1)

# pleshard_test_environment(): PLESHARD_TEST_ENVIRONMENT for every test of the calling
# directory, beside what each sets. Called last: a later ENVIRONMENT would replace it.
function(pleshard_test_environment)
  get_property(tests DIRECTORY PROPERTY TESTS)
  if(tests)
    set_property(TEST ${tests} APPEND PROPERTY ENVIRONMENT ${PLESHARD_TEST_ENVIRONMENT})
  endif()
endfunction()

# Tests that use the GPU where there is one (also those that skip, or stay on the host,
# without one) hold the `gpu` lock: under `ctest --parallel` they run one at a time while the
# others run beside them. Side by side on one H200, test_gpu_tiers and test_large_rows (43 s
# and 69 s alone) ran past the 300 s timeout. Their `gpu` label selects them (`ctest -L gpu`,
# the rest `-LE gpu`): on a GPU machine the suite takes longer than one command may run.
function(pleshard_uses_gpu)
  set_tests_properties(${ARGN} PROPERTIES RESOURCE_LOCK gpu LABELS gpu)
endfunction()

function(pleshard_add_test name)
  cmake_parse_arguments(arg "GPU" "" "" ${ARGN})
  add_executable(${name} ${arg_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE pleshard_test_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  add_test(NAME ${name} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 1
                                 ${PLESHARD_MPIEXEC_EXTRA_FLAGS} ${MPIEXEC_PREFLAGS}
                                 $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${PLESHARD_TEST_TIMEOUT} PROCESSORS 1)
  if(arg_GPU)
    pleshard_uses_gpu(${name})
  endif()
endfunction()

function(pleshard_add_mpi_test name)
  cmake_parse_arguments(arg "WILL_FAIL;GPU" "" "RANKS" ${ARGN})
  add_executable(${name} ${arg_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE pleshard_test_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  foreach(ranks IN LISTS arg_RANKS)
    add_test(NAME ${name}_np${ranks}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks}
                     ${PLESHARD_MPIEXEC_EXTRA_FLAGS} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}_np${ranks} PROPERTIES
      TIMEOUT ${PLESHARD_TEST_TIMEOUT} PROCESSORS ${ranks} WILL_FAIL ${arg_WILL_FAIL})
    if(arg_GPU)
      pleshard_uses_gpu(${name}_np${ranks})
    endif()
  endforeach()
endfunction()
