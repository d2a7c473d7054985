list(APPEND MMPROF_SOURCES
  util/digest.cpp
  util/error.cpp
  util/interrupt.cpp
  util/shell_quote.cpp
)
