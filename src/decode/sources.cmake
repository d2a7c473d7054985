# Sources of src/decode (paths relative to src/).
list(APPEND MMPROF_SOURCES
  decode/av_image_decoder.cpp
  decode/av_log.cpp
  decode/frame_sampling.cpp
  decode/image_decoder.cpp
  decode/jpeg_decoder.cpp
  decode/memory_io.cpp
  decode/pixel_limit.cpp
  decode/rgb_convert.cpp
  decode/sws_resize.cpp
  decode/video_decoder.cpp
)
