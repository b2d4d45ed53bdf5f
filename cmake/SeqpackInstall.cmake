# Install rules and the package config: find_package(seqpack COMPONENTS ...).
#
# Each component is one export set with its own targets file, and the config
# finds a component's dependencies only when that component is requested, so
# that a consumer of the reference needs nothing but a C++17 compiler:
#
#   reference    seqpack::common, seqpack::reference            (std only)
#   protocol     seqpack::protocol: Case, the oracle, serve()   (nlohmann-json)
#   attention    seqpack::attention: the consequence oracle     (Threads: the audit judges on every core)
#   properties   seqpack::properties: generators, catalogue     (RapidCheck)
#   conformance  seqpack::conformance: the runner, ports        (Threads)
#   gpu          seqpack::gpu_cpp, gpu_omp, gpu_cuda            (Thrust, OpenMP)
#   torch        seqpack::torch                                 (LibTorch)
include(CMakePackageConfigHelpers)
set(SEQPACK_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/seqpack)
# Helpers (ports) live under libexec, data under share: the CLI finds both
# relative to its own executable (cli/paths.cpp).
set(SEQPACK_LIBEXEC_DIR ${CMAKE_INSTALL_LIBEXECDIR}/seqpack)
set(SEQPACK_DATA_DIR ${CMAKE_INSTALL_DATADIR}/seqpack)
# With BUILD_SHARED_LIBS, installed executables find the installed libraries.
file(RELATIVE_PATH seqpack_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
file(RELATIVE_PATH seqpack_libexec_to_lib ${CMAKE_INSTALL_FULL_LIBEXECDIR}/seqpack ${CMAKE_INSTALL_FULL_LIBDIR})
set(CMAKE_INSTALL_RPATH "$ORIGIN/${seqpack_bin_to_lib};$ORIGIN/${seqpack_libexec_to_lib}")

# Installs `component`'s library targets (exported as seqpack::<EXPORT_NAME>)
# and its include directories.
function(seqpack_install_component component)
  if(NOT SEQPACK_INSTALL)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "TARGETS;INCLUDES" ${ARGN})
  # Installed static libraries may end up in a consumer's shared library or
  # Python extension.
  foreach(target ${ARG_TARGETS})
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    endif()
  endforeach()
  install(TARGETS ${ARG_TARGETS} EXPORT seqpack-${component}-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${component}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${component}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  foreach(dir ${ARG_INCLUDES})
    install(DIRECTORY ${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT ${component})
  endforeach()
  install(EXPORT seqpack-${component}-targets NAMESPACE seqpack:: DESTINATION ${SEQPACK_CMAKE_DIR}
    COMPONENT ${component})
  set_property(GLOBAL APPEND PROPERTY SEQPACK_COMPONENTS ${component})
endfunction()

# The config and version files; called once every component is defined.
function(seqpack_install_package)
  get_property(components GLOBAL PROPERTY SEQPACK_COMPONENTS)
  # The gpu component holds gpu_cuda where the CUDA build is on; then the
  # config makes a CUDA Thrust target too (the consumer enables CUDA).
  set(SEQPACK_INSTALLED_CUDA "")
  if(SEQPACK_ENABLE_CUDA)
    set(SEQPACK_INSTALLED_CUDA cuda)
  endif()
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/seqpackConfig.cmake.in
    ${PROJECT_BINARY_DIR}/seqpackConfig.cmake INSTALL_DESTINATION ${SEQPACK_CMAKE_DIR})
  # 0.x: a minor version may break the API, so only the same minor matches.
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/seqpackConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
  # The config belongs to every component: any one of them installs it.
  foreach(component ${components})
    install(FILES ${PROJECT_BINARY_DIR}/seqpackConfig.cmake ${PROJECT_BINARY_DIR}/seqpackConfigVersion.cmake
      DESTINATION ${SEQPACK_CMAKE_DIR} COMPONENT ${component})
  endforeach()
  message(STATUS "seqpack: installable components: ${components}")
endfunction()
