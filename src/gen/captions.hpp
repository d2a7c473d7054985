#pragma once
// Alt-text-like captions: deterministic pseudo-English built from phrase templates, mentioning
// what the synthetic picture shows (colours, shapes, motion). Lengths are long-tailed between 5
// and 60 words, as in web caption corpora, so tokenisation cost varies per sample.
#include <string>

#include "util/rng.hpp"

namespace mmprof::gen {

struct CaptionSubject {
  bool video = false;
  std::string main_color, accent_color;
  int shapes = 0;
  bool textured = false;
};

// A sentence of about `words` words (whole phrases: at least 5 and the target, at most 60),
// ending with a full stop.
std::string make_caption(Rng& rng, const CaptionSubject& subject, int words);
int count_words(const std::string& text);
// A caption length: 5 + 55 * u^2.5, so the median is ~10 words and ~3% exceed 50.
int draw_caption_words(Rng& rng);

}  // namespace mmprof::gen
