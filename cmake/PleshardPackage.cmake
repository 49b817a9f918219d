# Installs the library, its headers and a package config: find_package(pleshard) gives
# pleshard::pleshard with the dependencies pleshard was built with.
include(CMakePackageConfigHelpers)

install(TARGETS pleshard EXPORT pleshardTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The public API only: the umbrella header and what it includes (PleshardInstallHeaders.cmake);
# tests/install/installed_headers.sh checks the list.
install(CODE "
  set(PLESHARD_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")
  set(PLESHARD_PUBLIC_HEADERS pleshard.hpp)
  set(PLESHARD_INCLUDE_DESTINATION \"${CMAKE_INSTALL_INCLUDEDIR}/pleshard\")
  include(\"${PROJECT_SOURCE_DIR}/cmake/PleshardInstallHeaders.cmake\")")

set(PLESHARD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/pleshard)
install(EXPORT pleshardTargets NAMESPACE pleshard:: DESTINATION ${PLESHARD_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pleshardConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/pleshardConfig.cmake
                              INSTALL_DESTINATION ${PLESHARD_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pleshardConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pleshardConfig.cmake
              ${PROJECT_BINARY_DIR}/pleshardConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/PleshardDependencies.cmake
              ${PROJECT_SOURCE_DIR}/cmake/PleshardKokkos.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindNCCL.cmake
        DESTINATION ${PLESHARD_CMAKE_DIR})
