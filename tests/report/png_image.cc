#include "png_image.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>

namespace dtsim::testing {
namespace {

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return static_cast<uint8_t>(a);
  return static_cast<uint8_t>(pb <= pc ? b : c);
}

}  // namespace

PngImage read_png(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  static constexpr uint8_t kSignature[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (file.size() < 8 || !std::equal(std::begin(kSignature), std::end(kSignature), file.begin())) {
    throw std::runtime_error(path + ": not a PNG file");
  }
  PngImage img;
  int channels = 0;
  std::vector<uint8_t> idat;
  for (std::size_t at = 8; at + 12 <= file.size();) {
    const uint32_t len = be32(&file[at]);
    const std::string type(file.begin() + static_cast<long>(at) + 4,
                           file.begin() + static_cast<long>(at) + 8);
    if (at + 12 + len > file.size()) throw std::runtime_error(path + ": truncated chunk " + type);
    const uint8_t* data = &file[at + 8];
    if (type == "IHDR") {
      img.width = static_cast<int>(be32(data));
      img.height = static_cast<int>(be32(data + 4));
      const int depth = data[8], colour = data[9], interlace = data[12];
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0) {
        throw std::runtime_error(path + ": only 8-bit RGB/RGBA non-interlaced PNGs are supported");
      }
      channels = colour == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      idat.insert(idat.end(), data, data + len);
    } else if (type == "IEND") {
      break;
    }
    at += 12 + len;
  }
  if (channels == 0 || img.width <= 0 || img.height <= 0)
    throw std::runtime_error(path + ": no IHDR");
  const std::size_t stride =
      static_cast<std::size_t>(img.width) * static_cast<std::size_t>(channels);
  std::vector<uint8_t> raw((stride + 1) * static_cast<std::size_t>(img.height));
  uLongf raw_len = static_cast<uLongf>(raw.size());
  if (uncompress(raw.data(), &raw_len, idat.data(), static_cast<uLong>(idat.size())) != Z_OK ||
      raw_len != raw.size()) {
    throw std::runtime_error(path + ": image data does not inflate to the expected size");
  }
  std::vector<uint8_t> prev(stride, 0), cur(stride);
  img.rgba.resize(static_cast<std::size_t>(img.width) * static_cast<std::size_t>(img.height) * 4);
  for (int y = 0; y < img.height; ++y) {
    const uint8_t* line = &raw[static_cast<std::size_t>(y) * (stride + 1)];
    const uint8_t filter = line[0];
    for (std::size_t i = 0; i < stride; ++i) {
      const int a =
          i >= static_cast<std::size_t>(channels) ? cur[i - static_cast<std::size_t>(channels)] : 0;
      const int b = prev[i];
      const int c = i >= static_cast<std::size_t>(channels)
                        ? prev[i - static_cast<std::size_t>(channels)]
                        : 0;
      int v = line[1 + i];
      switch (filter) {
        case 0:
          break;
        case 1:
          v += a;
          break;
        case 2:
          v += b;
          break;
        case 3:
          v += (a + b) / 2;
          break;
        case 4:
          v += paeth(a, b, c);
          break;
        default:
          throw std::runtime_error(path + ": bad filter type");
      }
      cur[i] = static_cast<uint8_t>(v);
    }
    for (int x = 0; x < img.width; ++x) {
      uint8_t* px = &img.rgba[(static_cast<std::size_t>(y) * static_cast<std::size_t>(img.width) +
                               static_cast<std::size_t>(x)) *
                              4];
      const uint8_t* src = &cur[static_cast<std::size_t>(x) * static_cast<std::size_t>(channels)];
      px[0] = src[0];
      px[1] = src[1];
      px[2] = src[2];
      px[3] = channels == 4 ? src[3] : 255;
    }
    std::swap(prev, cur);
  }
  return img;
}

std::size_t PngImage::distinct_colours() const {
  std::set<uint32_t> seen;
  for (std::size_t i = 0; i + 3 < rgba.size(); i += 4) {
    seen.insert((uint32_t{rgba[i]} << 16) | (uint32_t{rgba[i + 1]} << 8) | rgba[i + 2]);
  }
  return seen.size();
}

std::size_t PngImage::non_white_pixels() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i + 3 < rgba.size(); i += 4)
    n += (rgba[i] & rgba[i + 1] & rgba[i + 2]) != 255;
  return n;
}

std::size_t PngImage::chromatic_pixels() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i + 3 < rgba.size(); i += 4) {
    const int r = rgba[i], g = rgba[i + 1], b = rgba[i + 2];
    n += std::max({std::abs(r - g), std::abs(g - b), std::abs(r - b)}) > 40;
  }
  return n;
}

}  // namespace dtsim::testing
