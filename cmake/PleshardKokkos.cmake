# Find Kokkos with a plain find_package(Kokkos). Debian's package (libtrilinos-kokkos-dev,
# Kokkos 3.4 built inside Trilinos) defines Kokkos::kokkos with an include directory that
# does not exist (<prefix>/lib/include); where that happens, point the target at the headers
# and libraries the same package reports, so users never have to touch their system.

find_package(Kokkos REQUIRED)

if(TARGET Kokkos::kokkos AND NOT PLESHARD_KOKKOS_CHECKED)
  get_target_property(_pleshard_kokkos_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
  set(_pleshard_kokkos_broken FALSE)
  foreach(_dir IN LISTS _pleshard_kokkos_inc)
    if(NOT _dir MATCHES "^\\$<" AND NOT IS_DIRECTORY "${_dir}")
      set(_pleshard_kokkos_broken TRUE)
    endif()
  endforeach()
  if(_pleshard_kokkos_broken)
    find_path(PLESHARD_KOKKOS_INCLUDE_DIR Kokkos_Core.hpp
              HINTS ${Kokkos_INCLUDE_DIRS} PATH_SUFFIXES trilinos REQUIRED)
    find_library(PLESHARD_KOKKOS_CORE_LIBRARY NAMES trilinos_kokkoscore kokkoscore
                 HINTS ${Kokkos_LIBRARY_DIRS} REQUIRED)
    set_target_properties(Kokkos::kokkos PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${PLESHARD_KOKKOS_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${PLESHARD_KOKKOS_CORE_LIBRARY};${CMAKE_DL_LIBS}"
      INTERFACE_COMPILE_OPTIONS "")
    message(STATUS "Kokkos ${Kokkos_VERSION}: repaired Debian target "
                   "(headers ${PLESHARD_KOKKOS_INCLUDE_DIR}, library ${PLESHARD_KOKKOS_CORE_LIBRARY})")
  endif()
  set(PLESHARD_KOKKOS_CHECKED TRUE)
endif()
