# Sources of src/data/gen (paths relative to src/).
list(APPEND MMPROF_SOURCES
  data/gen/captions.cpp
  data/gen/dataset_summary.cpp
  data/gen/default_dataset.cpp
  data/gen/av_check.cpp
  data/gen/generator.cpp
  data/gen/image_encode.cpp
  data/gen/image_synth.cpp
  data/gen/output_files.cpp
  data/gen/sample_plan.cpp
  data/gen/tar_writer.cpp
  data/gen/video_encode.cpp
  data/gen/video_synth.cpp
)
