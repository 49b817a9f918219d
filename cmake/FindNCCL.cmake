# Finds NCCL (header nccl.h, library libnccl) beside the CUDA toolkit or in system paths.
# Defines NCCL::nccl.
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_HOME
          PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl HINTS ${NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR} ENV NCCL_HOME
             PATH_SUFFIXES lib lib64)
if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_major REGEX "^#define NCCL_MAJOR")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_minor REGEX "^#define NCCL_MINOR")
  string(REGEX REPLACE ".* ([0-9]+).*" "\\1" _nccl_major "${_nccl_major}")
  string(REGEX REPLACE ".* ([0-9]+).*" "\\1" _nccl_minor "${_nccl_minor}")
  set(NCCL_VERSION "${_nccl_major}.${_nccl_minor}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
                                  VERSION_VAR NCCL_VERSION)
if(NCCL_FOUND AND NOT TARGET NCCL::nccl)
  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES IMPORTED_LOCATION "${NCCL_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
