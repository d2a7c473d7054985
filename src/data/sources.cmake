list(APPEND MMPROF_SOURCES
  data/dataset.cpp
  data/sampler.cpp
  data/tar_index.cpp
  data/tokenizer.cpp
  data/utf8.cpp
)
