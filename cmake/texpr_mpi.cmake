# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# MPI for tx::dist's tests and example: finds MPI (C++), and sets TEXPR_MPIEXEC_PREFLAGS and TEXPR_MPI_ENVIRONMENT
# (a test's ENVIRONMENT) so `mpiexec -n 2` also runs as root in a container on fewer cores than ranks.
find_package(MPI COMPONENTS CXX QUIET)
set(TEXPR_MPIEXEC_PREFLAGS ${MPIEXEC_PREFLAGS})
set(TEXPR_MPI_ENVIRONMENT "")
if(MPI_CXX_FOUND)
  execute_process(COMMAND "${MPIEXEC_EXECUTABLE}" --version OUTPUT_VARIABLE _texpr_mpiexec_version ERROR_QUIET)
  if(_texpr_mpiexec_version MATCHES "Open MPI|OpenRTE")
    # Open MPI refuses to start as root unless told, and to place more ranks than cores.
    list(APPEND TEXPR_MPIEXEC_PREFLAGS --allow-run-as-root --oversubscribe)
    # Containers restrict ptrace, so Open MPI's single-copy shared memory (CMA) fails: copy through a buffer.
    set(TEXPR_MPI_ENVIRONMENT "OMPI_MCA_btl_vader_single_copy_mechanism=none;OMPI_MCA_rmaps_base_oversubscribe=1")
  endif()
  if(TEXPR_SANITIZED_BUILD)
    # Open MPI's MPI_Init allocates process-lifetime state it never frees, which LeakSanitizer reports in every
    # rank; the leak check is off for the MPI programs only.
    list(APPEND TEXPR_MPI_ENVIRONMENT ASAN_OPTIONS=detect_leaks=0:handle_sigill=1)
  endif()
endif()
