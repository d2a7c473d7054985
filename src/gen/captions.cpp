#include "gen/captions.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace mmprof::gen {
namespace {

template <size_t N>
const char* pick(Rng& rng, const char* const (&words)[N]) {
  return words[rng.range(0, static_cast<int64_t>(N) - 1)];
}

constexpr const char* kImageOpeners[] = {"a photo of",   "a close-up of",    "an image showing",
                                         "a picture of", "a blurry shot of", "a wide view of"};
constexpr const char* kVideoOpeners[] = {"a video of", "footage showing", "a short clip of",
                                         "a slow pan across", "a handheld video of"};
constexpr const char* kAdjectives[] = {"small", "large", "old",     "bright", "quiet", "wet",
                                       "soft",  "round", "distant", "rough",  "shiny", "faded"};
constexpr const char* kNouns[] = {"wall",   "field", "stone",  "table",   "garden", "street",
                                  "window", "river", "hill",   "blanket", "door",   "tree",
                                  "road",   "lamp",  "market", "boat",    "cloud",  "fence"};
constexpr const char* kPrepositions[] = {"near",  "behind", "under",       "beside",
                                         "above", "across", "in front of", "next to"};
constexpr const char* kVerbs[] = {"rests", "stands", "leans", "glows", "waits", "sits"};
constexpr const char* kMotion[] = {"drifts", "moves slowly", "rolls", "slides", "bounces"};
constexpr const char* kTails[] = {"in the afternoon light", "on a cloudy day", "at dusk",
                                  "in the morning",         "after the rain",  "in soft focus"};

void subject_phrase(Rng& rng, const CaptionSubject& s, std::ostringstream& out) {
  out << (s.video ? pick(rng, kVideoOpeners) : pick(rng, kImageOpeners)) << " a "
      << (s.textured ? "textured " : "") << s.main_color << " " << pick(rng, kNouns);
  if (s.shapes > 0 && rng.uniform() < 0.5) {
    out << " with " << (s.shapes == 1 ? "a " : "some ") << s.accent_color << " "
        << (s.shapes == 1 ? "shape" : "shapes");
  }
}

void filler_phrase(Rng& rng, const CaptionSubject& s, std::ostringstream& out) {
  switch (rng.range(0, 3)) {
    case 0:
      out << " " << pick(rng, kPrepositions) << " the " << pick(rng, kAdjectives) << " "
          << pick(rng, kNouns);
      break;
    case 1:
      out << " while a " << pick(rng, kAdjectives) << " " << pick(rng, kNouns) << " "
          << (s.video ? pick(rng, kMotion) : pick(rng, kVerbs));
      break;
    case 2:
      out << " " << pick(rng, kTails);
      break;
    default:
      out << " and a " << pick(rng, kAdjectives) << " " << pick(rng, kNouns);
      break;
  }
}

}  // namespace

int draw_caption_words(Rng& rng) {
  return 5 + static_cast<int>(std::floor(55.0 * std::pow(rng.uniform(), 2.5) + 0.5));
}

std::string make_caption(Rng& rng, const CaptionSubject& subject, int words) {
  words = std::clamp(words, 5, 60);
  std::ostringstream text;
  subject_phrase(rng, subject, text);
  // Whole phrases only, so sentences never end in "... with a."; the last phrase that would pass
  // 60 words is dropped.
  std::string caption = text.str();
  for (int n = count_words(caption); n < words;) {
    std::ostringstream phrase;
    filler_phrase(rng, subject, phrase);
    const int more = count_words(phrase.str());
    if (n + more > 60) break;
    caption += phrase.str();
    n += more;
  }
  caption[0] = static_cast<char>(caption[0] - 'a' + 'A');
  return caption + ".";
}

int count_words(const std::string& text) {
  int n = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = c == ' ';
    if (!space && !in_word) ++n;
    in_word = !space;
  }
  return n;
}

}  // namespace mmprof::gen
