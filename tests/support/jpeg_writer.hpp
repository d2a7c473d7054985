#pragma once
// JPEG files the generator does not make, written with libjpeg-turbo's libjpeg API: progressive
// JPEGs with a chosen scan script (many scans: the denial-of-service pattern), and CMYK or YCCK
// JPEGs as Photoshop writes them (Adobe marker, inverted CMYK).
#include <cstdint>
#include <vector>

namespace mmprof::test {

// A width x height YCbCr JPEG of a smooth gradient. `refinements` = 0: jpeg_simple_progression's
// 10 scans; n > 0: one DC scan, then for each component and each of the 63 AC coefficients a
// first scan at point transform n and n refinement scans (1 + 3 x 63 x (n + 1) scans).
std::vector<uint8_t> progressive_jpeg(int width, int height, int refinements);
// How many scans progressive_jpeg(…, refinements) holds.
int progressive_scans(int refinements);

// `jpeg` with its last scan (its last SOS segment up to EOI) repeated `times` more times: the
// "thousands of scans" of libjpeg-turbo's report, each one walking the whole image again. libjpeg
// warns "Inconsistent progression sequence" at the first repeat.
std::vector<uint8_t> with_last_scan_repeated(std::vector<uint8_t> jpeg, int times);

// A width x height JPEG of one CMYK colour, stored as given (Adobe's inverted convention: 255 is
// no ink), in colour space CMYK or YCCK, quality 100.
std::vector<uint8_t> cmyk_jpeg(int width, int height, const uint8_t stored[4], bool ycck);

}  // namespace mmprof::test
