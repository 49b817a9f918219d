# Finds liburing (header liburing.h, library liburing) in system paths or under
# LIBURING_ROOT / CMAKE_PREFIX_PATH. Defines Liburing::liburing.
find_path(LIBURING_INCLUDE_DIR liburing.h HINTS ${LIBURING_ROOT} ENV LIBURING_ROOT PATH_SUFFIXES include)
find_library(LIBURING_LIBRARY NAMES uring HINTS ${LIBURING_ROOT} ENV LIBURING_ROOT PATH_SUFFIXES lib lib64)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Liburing REQUIRED_VARS LIBURING_LIBRARY LIBURING_INCLUDE_DIR)
if(Liburing_FOUND AND NOT TARGET Liburing::liburing)
  add_library(Liburing::liburing UNKNOWN IMPORTED)
  set_target_properties(Liburing::liburing PROPERTIES IMPORTED_LOCATION "${LIBURING_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${LIBURING_INCLUDE_DIR}")
endif()
mark_as_advanced(LIBURING_INCLUDE_DIR LIBURING_LIBRARY)
