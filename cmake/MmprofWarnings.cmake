# Warnings are set per target (mmprof_warnings), never globally.
add_library(mmprof_warnings INTERFACE)
target_compile_options(mmprof_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                                 -Wno-sign-conversion -Wnon-virtual-dtor)
if(MMPROF_WERROR)
  target_compile_options(mmprof_warnings INTERFACE -Werror)
endif()
# A unity build (the sanitizer presets; CMAKE_UNITY_BUILD) compiles each source as a file included
# by a generated one, so GCC takes a pimpl whose fields have a file-local type (anonymous
# namespace) for a header's type with external linkage and warns (-Wsubobject-linkage): true of
# headers, false of these sources, which the ordinary build compiles on their own.
if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(mmprof_warnings INTERFACE -Wno-subobject-linkage)
endif()
