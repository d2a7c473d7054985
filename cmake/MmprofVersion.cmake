# Embeds mmprof's version and git commit at build time (re-read on every build).
set(MMPROF_VERSION_OUT ${CMAKE_BINARY_DIR}/generated/mmprof/version.cpp)
add_custom_target(mmprof_version_gen
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR} -DOUT=${MMPROF_VERSION_OUT}
          -DVERSION=${PROJECT_VERSION} -P ${CMAKE_SOURCE_DIR}/cmake/WriteVersion.cmake
  BYPRODUCTS ${MMPROF_VERSION_OUT}
  COMMENT "Embedding mmprof version and commit")
