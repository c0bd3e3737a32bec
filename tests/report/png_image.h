// A minimal PNG decoder for tests: 8-bit RGB or RGBA, non-interlaced, which is what headless
// Chromium writes for --screenshot. Enough to tell a rendered page from a blank one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dtsim::testing {

struct PngImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgba;  // width * height * 4

  // Distinct colours, and how many pixels are not white.
  std::size_t distinct_colours() const;
  std::size_t non_white_pixels() const;
  // Pixels whose channels differ (not white, grey or black): plots, not text.
  std::size_t chromatic_pixels() const;
};

// Throws std::runtime_error saying what is wrong with the file.
PngImage read_png(const std::string& path);

}  // namespace dtsim::testing
