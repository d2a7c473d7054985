# install(): what `cmake --install` (and `make install`) puts under the prefix.
#
#   bin/mmprof                                the executable
#   lib/mmprof/libmmprof_torch_step.so        the torch step plugin (with libtorch), found by the
#                                             installed mmprof as ../lib/mmprof/ from its folder
#   lib/mmprof/libmmprof_cupti_inject.so      for CUDA_INJECTION64_PATH (with the CUDA toolkit)
#   lib/libmmprof_<layer>.a                   one static library per layer (cmake/MmprofLayers.cmake)
#   include/mmprof/*.hpp                      the public headers (each layer's src/<layer>/include/)
#   share/mmprof/python/                      the Python hook (sitecustomize.py, mmprof_hook/)
#   share/mmprof/configs/                     the configurations of configs/ (--config)
#   share/man/man1/mmprof.1                   the man page (scripts/gen-man, from --help)
#   share/bash-completion/completions/mmprof  bash completion (scripts/gen-completion)
#   share/zsh/vendor-completions/_mmprof      zsh completion (idem)
#   lib/cmake/mmprof/                         the CMake package (mmprofConfig.cmake.in):
#       find_package(mmprof REQUIRED)
#       target_link_libraries(app PRIVATE mmprof::rundir)   # a layer, or mmprof::core for all
#
# (lib/ is CMAKE_INSTALL_LIBDIR of GNUInstallDirs, lib/x86_64-linux-gnu for the prefix /usr.)
include(CMakePackageConfigHelpers)
set(MMPROF_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/mmprof)

install(TARGETS mmprof RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET mmprof_torch_step)
  # Keeps the folder of a libtorch outside the system's (Torch_DIR), which the build RPATH had and
  # an install would otherwise drop. (The CUPTI injection library needs no shared library of CUDA.)
  set_target_properties(mmprof_torch_step PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
endif()
foreach(module mmprof_torch_step mmprof_cupti_inject)
  if(TARGET ${module})
    install(TARGETS ${module} LIBRARY DESTINATION ${MMPROF_INSTALL_PLUGINDIR})
  endif()
endforeach()

get_property(MMPROF_INSTALL_LAYERS GLOBAL PROPERTY MMPROF_LAYERS)
list(TRANSFORM MMPROF_INSTALL_LAYERS PREPEND mmprof_)
install(TARGETS ${MMPROF_INSTALL_LAYERS} mmprof_core EXPORT mmprofTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
get_property(MMPROF_PUBLIC_HEADER_DIRS GLOBAL PROPERTY MMPROF_PUBLIC_HEADER_DIRS)
foreach(dir IN LISTS MMPROF_PUBLIC_HEADER_DIRS)
  install(DIRECTORY ${dir} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
endforeach()
# The zero-code Python hook a user's job is started with (docs/external-hook.md).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/external/python/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/mmprof/python
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/mmprof/configs)
install(FILES ${PROJECT_BINARY_DIR}/src/mmprof.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_BINARY_DIR}/src/completion/mmprof
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${PROJECT_BINARY_DIR}/src/completion/_mmprof
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)

install(EXPORT mmprofTargets NAMESPACE mmprof:: DESTINATION ${MMPROF_INSTALL_CMAKEDIR})
# What mmprofConfig.cmake has to find again for the layers' link interfaces.
if(MMPROF_HAVE_CUDA)
  set(MMPROF_PACKAGE_CUDA ON)
else()
  set(MMPROF_PACKAGE_CUDA OFF)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/mmprofConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/package/mmprofConfig.cmake
                              INSTALL_DESTINATION ${MMPROF_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/mmprofConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/mmprofConfig.cmake
              ${PROJECT_BINARY_DIR}/package/mmprofConfigVersion.cmake
        DESTINATION ${MMPROF_INSTALL_CMAKEDIR})

# Everything the rules above install, to build before `cmake --install` (`make install`) without
# the tests and benchmarks.
add_custom_target(mmprof_installed)
add_dependencies(mmprof_installed mmprof mmprof_man mmprof_completions ${MMPROF_INSTALL_LAYERS})
foreach(module mmprof_torch_step mmprof_cupti_inject)
  if(TARGET ${module})
    add_dependencies(mmprof_installed ${module})
  endif()
endforeach()
