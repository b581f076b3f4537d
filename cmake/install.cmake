# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Install rules (TEXPR_INSTALL, on when texpr is the top-level project): the headers, the exported
# texpr::texpr target and a relocatable package config, all under <prefix>/share/cmake/texpr since
# a header-only package is architecture independent.
include(CMakePackageConfigHelpers)

set(TEXPR_INSTALL_CMAKEDIR "${CMAKE_INSTALL_DATADIR}/cmake/texpr" CACHE STRING
    "Where texprConfig.cmake is installed, relative to the prefix")
mark_as_advanced(TEXPR_INSTALL_CMAKEDIR)

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/texpr" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh" PATTERN "*.h")
install(TARGETS texpr EXPORT texprTargets)
install(EXPORT texprTargets NAMESPACE texpr:: DESTINATION "${TEXPR_INSTALL_CMAKEDIR}")
# The same targets for a build tree (find_package with texpr_DIR=<build dir>, no install step).
export(EXPORT texprTargets NAMESPACE texpr:: FILE "${PROJECT_BINARY_DIR}/texprTargets.cmake")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/texprConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/texprConfig.cmake"
  INSTALL_DESTINATION "${TEXPR_INSTALL_CMAKEDIR}")
# 0.x: a minor release may break the API, so 0.1 accepts only 0.1.*.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/texprConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES "${PROJECT_BINARY_DIR}/texprConfig.cmake" "${PROJECT_BINARY_DIR}/texprConfigVersion.cmake"
  DESTINATION "${TEXPR_INSTALL_CMAKEDIR}")
