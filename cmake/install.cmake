# Install rules: headers, the exported texpr::texpr target, and a relocatable package config.
include(CMakePackageConfigHelpers)

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/texpr" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(TARGETS texpr EXPORT texprTargets)
install(EXPORT texprTargets NAMESPACE texpr:: DESTINATION "${CMAKE_INSTALL_DATADIR}/cmake/texpr")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/texprConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/texprConfig.cmake"
  INSTALL_DESTINATION "${CMAKE_INSTALL_DATADIR}/cmake/texpr")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/texprConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES "${PROJECT_BINARY_DIR}/texprConfig.cmake" "${PROJECT_BINARY_DIR}/texprConfigVersion.cmake"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/cmake/texpr")
