# Warnings are set per target (mmprof_warnings), never globally.
add_library(mmprof_warnings INTERFACE)
target_compile_options(mmprof_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                                 -Wno-sign-conversion -Wnon-virtual-dtor)
if(MMPROF_WERROR)
  target_compile_options(mmprof_warnings INTERFACE -Werror)
endif()
