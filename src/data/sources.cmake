list(APPEND MMPROF_SOURCES
  data/dataset.cpp
  data/sampler.cpp
  data/tokenizer.cpp
)
