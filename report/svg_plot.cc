#include "report/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace dtsim::report {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
const char* colour(std::size_t i) {
  return kPalette[i % std::size(kPalette)];
}

std::string label(double v) {
  return fmt::format("{:.4g}", v);
}

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double pixel_lo = 0, pixel_hi = 1;

  double map(double v) const {
    const double a = log ? std::log10(lo) : lo;
    const double b = log ? std::log10(hi) : hi;
    const double x = log ? std::log10(v) : v;
    return pixel_lo + (x - a) / (b - a) * (pixel_hi - pixel_lo);
  }

  std::vector<double> ticks() const {
    std::vector<double> out;
    if (log) {
      const int d0 = static_cast<int>(std::floor(std::log10(lo)));
      const int d1 = static_cast<int>(std::ceil(std::log10(hi)));
      const bool fine = d1 - d0 <= 2;
      for (int d = d0; d <= d1; ++d) {
        for (const double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
          const double v = m * std::pow(10.0, d);
          if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
        }
      }
      return out;
    }
    const double raw = (hi - lo) / 5;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (const double m : {1.0, 2.0, 5.0, 10.0}) {
      step = m * mag;
      if (step >= raw) break;
    }
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
      out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    }
    return out;
  }
};

Axis fit_axis(std::vector<double> values, bool log) {
  Axis a;
  a.log = log;
  if (log)
    values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !(v > 0); }),
                 values.end());
  values.erase(
      std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
      values.end());
  if (values.empty()) {
    a.lo = log ? 1 : 0;
    a.hi = log ? 10 : 1;
    return a;
  }
  const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  double lo = *mn, hi = *mx;
  if (log) {
    if (hi / lo < 1.0001) {
      lo /= 2;
      hi *= 2;
    }
    a.lo = lo / 1.15;
    a.hi = hi * 1.15;
  } else {
    if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
      lo -= 1;
      hi += 1;
    }
    const double pad = (hi - lo) * 0.06;
    a.lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
    a.hi = hi + pad;
  }
  return a;
}

}  // namespace

std::string xml_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

SvgPlot::SvgPlot(std::string title, std::string x_label, std::string y_label, int width, int height)
    : title_(std::move(title)),
      x_label_(std::move(x_label)),
      y_label_(std::move(y_label)),
      width_(width),
      height_(height) {}

SvgPlot& SvgPlot::log_x(bool on) {
  log_x_ = on;
  return *this;
}
SvgPlot& SvgPlot::log_y(bool on) {
  log_y_ = on;
  return *this;
}
SvgPlot& SvgPlot::line(std::string name, std::vector<std::pair<double, double>> points) {
  std::sort(points.begin(), points.end());
  series_.push_back({std::move(name), std::move(points), true, false});
  return *this;
}
SvgPlot& SvgPlot::scatter(std::string name, std::vector<std::pair<double, double>> points,
                          bool emphasis) {
  series_.push_back({std::move(name), std::move(points), false, emphasis});
  return *this;
}

std::string SvgPlot::svg() const {
  constexpr int kLeft = 72, kTop = 36, kBottom = 52;
  // The legend sits right of the plot, as wide as its longest name (about 7 px a character).
  std::size_t longest = 0;
  for (const Series& s : series_) longest = std::max(longest, s.name.size());
  const int kRight = std::clamp(44 + 7 * static_cast<int>(longest), 120, width_ / 2);
  std::vector<double> xs, ys;
  for (const Series& s : series_) {
    for (const auto& [x, y] : s.points) {
      xs.push_back(x);
      ys.push_back(y);
    }
  }
  Axis ax = fit_axis(xs, log_x_);
  Axis ay = fit_axis(ys, log_y_);
  ax.pixel_lo = kLeft;
  ax.pixel_hi = width_ - kRight;
  ay.pixel_lo = height_ - kBottom;
  ay.pixel_hi = kTop;
  auto visible = [&](double x, double y) {
    return std::isfinite(x) && std::isfinite(y) && (!log_x_ || x > 0) && (!log_y_ || y > 0);
  };

  std::string o = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="12">)"
      "\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
      width_, height_);
  o += fmt::format("<text x=\"{}\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
                   kLeft, xml_escape(title_));
  o += "<g class=\"axes\" stroke=\"#ccc\">\n";
  for (const double t : ax.ticks()) {
    const double px = ax.map(t);
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", px, kTop,
                     height_ - kBottom);
    o += fmt::format(
        "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" stroke=\"none\" "
        "fill=\"#333\">{}</text>\n",
        px, height_ - kBottom + 16, label(t));
  }
  for (const double t : ay.ticks()) {
    const double py = ay.map(t);
    o += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>\n", kLeft, py,
                     width_ - kRight);
    o += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" stroke=\"none\" fill=\"#333\">{}</text>\n",
        kLeft - 6, py + 4, label(t));
  }
  o += "</g>\n";
  o += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", kLeft,
      kTop, width_ - kLeft - kRight, height_ - kTop - kBottom);
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n",
                   (kLeft + width_ - kRight) / 2, height_ - 12, xml_escape(x_label_),
                   log_x_ ? " (log)" : "");
  o += fmt::format(
      "<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\">{}{}</text>\n",
      (kTop + height_ - kBottom) / 2, xml_escape(y_label_), log_y_ ? " (log)" : "");

  for (std::size_t i = 0; i < series_.size(); ++i) {
    const Series& s = series_[i];
    const char* c = colour(i);
    o += fmt::format("<g class=\"series\" data-name=\"{}\">\n", xml_escape(s.name));
    if (s.lines) {
      std::string pts;
      for (const auto& [x, y] : s.points) {
        if (visible(x, y)) pts += fmt::format("{:.1f},{:.1f} ", ax.map(x), ay.map(y));
      }
      o += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n",
                       c, pts);
    }
    for (const auto& [x, y] : s.points) {
      if (!visible(x, y)) continue;
      o += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\" stroke=\"{}\"><title>{}: ({}, "
          "{})</title></circle>\n",
          ax.map(x), ay.map(y), s.emphasis ? 5 : 3, s.emphasis || s.lines ? c : "white", c,
          xml_escape(s.name), label(x), label(y));
    }
    o += "</g>\n";
    const int ly = kTop + 8 + static_cast<int>(i) * 18;
    o += fmt::format(
        "<g class=\"legend\"><rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}</text></g>\n",
        width_ - kRight + 12, ly, c, width_ - kRight + 30, ly + 10, xml_escape(s.name));
  }
  o += "</svg>\n";
  return o;
}

std::string stacked_bars_svg(
    const std::string& title, const std::string& y_label, const std::vector<std::string>& bars,
    const std::vector<std::pair<std::string, std::vector<double>>>& segments, int width,
    int height) {
  constexpr int kLeft = 72, kRight = 170, kTop = 36, kBottom = 70;
  std::vector<double> totals(bars.size(), 0);
  for (const auto& [name, values] : segments) {
    for (std::size_t i = 0; i < bars.size() && i < values.size(); ++i)
      totals[i] += std::max(values[i], 0.0);
  }
  Axis ay =
      fit_axis({0, totals.empty() ? 1 : *std::max_element(totals.begin(), totals.end())}, false);
  ay.pixel_lo = height - kBottom;
  ay.pixel_hi = kTop;
  std::string o = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" class="bars" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="12">)"
      "\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
      width, height);
  o += fmt::format("<text x=\"{}\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
                   kLeft, xml_escape(title));
  for (const double t : ay.ticks()) {
    o += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kLeft, ay.map(t), width - kRight, kLeft - 6, ay.map(t) + 4, label(t));
  }
  o += fmt::format(
      "<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      (kTop + height - kBottom) / 2, xml_escape(y_label));
  const double slot =
      bars.empty() ? 0
                   : static_cast<double>(width - kLeft - kRight) / static_cast<double>(bars.size());
  for (std::size_t i = 0; i < bars.size(); ++i) {
    double base = 0;
    const double x = kLeft + slot * static_cast<double>(i) + slot * 0.15;
    for (std::size_t k = 0; k < segments.size(); ++k) {
      const double v = i < segments[k].second.size() ? std::max(segments[k].second[i], 0.0) : 0;
      if (v <= 0) continue;
      const double y0 = ay.map(base), y1 = ay.map(base + v);
      o += fmt::format(
          "<rect class=\"segment\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"{}\">"
          "<title>{} {}: {}</title></rect>\n",
          x, y1, slot * 0.7, y0 - y1, colour(k), xml_escape(bars[i]), xml_escape(segments[k].first),
          label(v));
      base += v;
    }
    o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     x + slot * 0.35, height - kBottom + 16, xml_escape(bars[i]));
  }
  o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333\"/>\n", kLeft,
                   height - kBottom, width - kRight);
  for (std::size_t k = 0; k < segments.size(); ++k) {
    const int ly = kTop + 8 + static_cast<int>(k) * 18;
    o += fmt::format(
        "<g class=\"legend\"><rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}</text></g>\n",
        width - kRight + 12, ly, colour(k), width - kRight + 30, ly + 10,
        xml_escape(segments[k].first));
  }
  return o + "</svg>\n";
}

std::string heat_map_svg(const std::string& title, const std::vector<std::string>& rows,
                         const std::vector<std::vector<double>>& values, const std::string& x_label,
                         int width) {
  constexpr int kLeft = 170, kRight = 90, kTop = 36, kRow = 16;
  std::size_t cols = 0;
  for (const auto& r : values) cols = std::max(cols, r.size());
  const int height = kTop + static_cast<int>(rows.size()) * kRow + 40;
  const double cell =
      cols == 0 ? 0 : static_cast<double>(width - kLeft - kRight) / static_cast<double>(cols);
  std::string o = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" class="heatmap" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="11">)"
      "\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
      width, height);
  o += fmt::format("<text x=\"{}\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", 8,
                   xml_escape(title));
  auto shade = [](double v) {
    v = std::clamp(std::isfinite(v) ? v : 0.0, 0.0, 1.0);
    const int g = static_cast<int>(255 - 200 * v);
    const int b = static_cast<int>(255 - 230 * v);
    return fmt::format("#{:02x}{:02x}{:02x}", 255 - static_cast<int>(90 * v), g, b);
  };
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const int y = kTop + static_cast<int>(r) * kRow;
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, y + 12,
                     xml_escape(rows[r]));
    for (std::size_t c = 0; r < values.size() && c < values[r].size(); ++c) {
      o += fmt::format(
          "<rect class=\"cell\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" "
          "fill=\"{}\"><title>{:.0f}%</title></rect>\n",
          kLeft + cell * static_cast<double>(c), y, cell + 0.2, kRow - 1, shade(values[r][c]),
          100 * values[r][c]);
    }
  }
  const int by = kTop + static_cast<int>(rows.size()) * kRow + 6;
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                   (kLeft + width - kRight) / 2, by + 14, xml_escape(x_label));
  for (int i = 0; i <= 4; ++i) {  // legend scale
    o += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\" stroke=\"#999\"/><text "
        "x=\"{}\" y=\"{}\">{}%</text>\n",
        width - kRight + 10, kTop + i * 18, shade(i / 4.0), width - kRight + 28, kTop + i * 18 + 11,
        i * 25);
  }
  return o + "</svg>\n";
}

std::string timeline_svg(const Timeline& timeline, int width) {
  constexpr int kLeft = 190, kRight = 20, kTop = 36, kRow = 20;
  const auto& tracks = timeline.tracks();
  std::vector<int> row_of(tracks.size(), -1);
  std::vector<std::string> row_names;
  Time t0 = Time::max(), t1 = Time::zero();
  for (const Span& s : timeline.spans()) {
    if (s.track >= tracks.size()) continue;
    if (row_of[s.track] < 0) {
      row_of[s.track] = static_cast<int>(row_names.size());
      row_names.push_back(tracks[s.track].process + " " + tracks[s.track].thread);
    }
    t0 = std::min(t0, s.start);
    t1 = std::max(t1, s.end);
  }
  if (row_names.empty()) t0 = t1 = Time::zero();
  const int height = kTop + static_cast<int>(row_names.size()) * kRow + 44;
  Axis ax = fit_axis({t0.us(), t1.us()}, false);
  ax.lo = t0.us();
  ax.hi = t1 > t0 ? t1.us() : t0.us() + 1;
  ax.pixel_lo = kLeft;
  ax.pixel_hi = width - kRight;
  std::string o = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="11">)"
      "\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
      width, height);
  o += "<text x=\"8\" y=\"20\" font-size=\"15\" font-weight=\"bold\">Timeline</text>\n";
  const int axis_y = kTop + static_cast<int>(row_names.size()) * kRow;
  for (const double t : ax.ticks()) {
    o += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        ax.map(t), kTop, axis_y, axis_y + 14, label(t));
  }
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">time (us)</text>\n",
                   (kLeft + width - kRight) / 2, axis_y + 32);
  for (std::size_t r = 0; r < row_names.size(); ++r) {
    const int y = kTop + static_cast<int>(r) * kRow;
    o += fmt::format(
        "<rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
        y, width, kRow, r % 2 ? "#fafafa" : "#f0f0f0", kLeft - 6, y + 14, xml_escape(row_names[r]));
  }
  std::map<std::string, std::size_t> category_colour;
  for (const Span& s : timeline.spans()) {
    if (s.track >= tracks.size()) continue;
    const std::size_t c = category_colour.emplace(s.category, category_colour.size()).first->second;
    const int y = kTop + row_of[s.track] * kRow + 3;
    const double x0 = ax.map(s.start.us());
    const double x1 = std::max(ax.map(s.end.us()), x0 + 1);
    o += fmt::format(
        "<rect class=\"span\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" "
        "stroke=\"white\" stroke-width=\"0.5\">"
        "<title>{} [{}] {} us</title></rect>\n",
        x0, y, x1 - x0, kRow - 6, colour(c), xml_escape(s.name), xml_escape(s.category),
        label((s.end - s.start).us()));
    if (x1 - x0 > 7.0 * static_cast<double>(s.name.size())) {
      o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"white\" font-size=\"10\">{}</text>\n",
                       x0 + 3, y + 11, xml_escape(s.name));
    }
  }
  return o + "</svg>\n";
}

}  // namespace dtsim::report
