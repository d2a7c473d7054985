#include "support/jpeg_writer.hpp"

// jpeglib.h needs FILE and size_t declared first.
// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on

#include <cstddef>
#include <cstdlib>

namespace mmprof::test {
namespace {

void fail(j_common_ptr info) {
  char text[JMSG_LENGTH_MAX];
  (*info->err->format_message)(info, text);
  std::fprintf(stderr, "jpeg_writer: %s\n", text);
  std::abort();  // test input that libjpeg refuses: a bug of this file
}

// Compresses rows of `components` bytes per pixel into a JPEG in memory.
template <typename Setup>
std::vector<uint8_t> compress(int width, int height, int components, J_COLOR_SPACE in,
                              const std::vector<uint8_t>& pixels, Setup&& setup) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  err.error_exit = fail;
  jpeg_create_compress(&c);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &out, &size);
  c.image_width = static_cast<JDIMENSION>(width);
  c.image_height = static_cast<JDIMENSION>(height);
  c.input_components = components;
  c.in_color_space = in;
  jpeg_set_defaults(&c);
  setup(c);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    auto* row = const_cast<uint8_t*>(pixels.data()) +
                static_cast<size_t>(c.next_scanline) * width * components;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  std::vector<uint8_t> bytes(out, out + size);
  jpeg_destroy_compress(&c);
  std::free(out);
  return bytes;
}

}  // namespace

int progressive_scans(int refinements) {
  return refinements == 0 ? 10 : 1 + 3 * 63 * (refinements + 1);
}

std::vector<uint8_t> progressive_jpeg(int width, int height, int refinements) {
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * height * 3);
  for (size_t i = 0; i < pixels.size(); ++i)
    pixels[i] = static_cast<uint8_t>((i * 7 / 3 + i / (3 * width)) & 0xFF);
  std::vector<jpeg_scan_info> script;
  if (refinements > 0) {
    script.push_back({3, {0, 1, 2, 0}, 0, 0, 0, 0});  // DC of all components
    for (int comp = 0; comp < 3; ++comp) {
      for (int k = 1; k < 64; ++k) {
        script.push_back({1, {comp, 0, 0, 0}, k, k, 0, refinements});
        for (int al = refinements; al > 0; --al)
          script.push_back({1, {comp, 0, 0, 0}, k, k, al, al - 1});
      }
    }
  }
  return compress(width, height, 3, JCS_RGB, pixels, [&](jpeg_compress_struct& c) {
    jpeg_set_quality(&c, 90, TRUE);
    if (script.empty()) {
      jpeg_simple_progression(&c);
    } else {
      c.scan_info = script.data();
      c.num_scans = static_cast<int>(script.size());
    }
  });
}

std::vector<uint8_t> with_last_scan_repeated(std::vector<uint8_t> jpeg, int times) {
  size_t sos = 0;
  for (size_t i = 0; i + 1 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xDA) sos = i;
  }
  const std::vector<uint8_t> scan(jpeg.begin() + static_cast<ptrdiff_t>(sos), jpeg.end() - 2);
  jpeg.resize(jpeg.size() - 2);  // EOI
  for (int k = 0; k < times; ++k)
    jpeg.insert(jpeg.end(), scan.begin(), scan.end());
  jpeg.push_back(0xFF);
  jpeg.push_back(0xD9);
  return jpeg;
}

std::vector<uint8_t> cmyk_jpeg(int width, int height, const uint8_t stored[4], bool ycck) {
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * height * 4);
  for (size_t i = 0; i < pixels.size(); ++i)
    pixels[i] = stored[i % 4];
  return compress(width, height, 4, JCS_CMYK, pixels, [&](jpeg_compress_struct& c) {
    jpeg_set_colorspace(&c, ycck ? JCS_YCCK : JCS_CMYK);  // writes the Adobe marker
    jpeg_set_quality(&c, 100, TRUE);
  });
}

}  // namespace mmprof::test
