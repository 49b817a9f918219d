# Installs the library, its headers and a package config: find_package(pleshard) gives
# pleshard::pleshard with the dependencies pleshard was built with.
include(CMakePackageConfigHelpers)

install(TARGETS pleshard EXPORT pleshardTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pleshard
        FILES_MATCHING PATTERN "*.hpp")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pleshard/kernels
        FILES_MATCHING PATTERN "*.hpp")

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
