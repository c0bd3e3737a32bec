// Value types for the three physical quantities every layer passes around, so that a latency is
// never added to a size: Time (integer picoseconds), Bytes (integer bytes) and Bandwidth (bytes
// per second). Each parses and prints its units:
//   Time t = parse_time("1.5us");        // 1'500'000 ps;  to_string(t) == "1.5us"
//   Bytes b = parse_bytes("8GiB");       // GB is 1e9 bytes, GiB is 2^30
//   Bandwidth bw = parse_bandwidth("400Gbps");   // == 50 GB/s
//   Time x = bw.transfer_time(b);        // rounded up to the next picosecond
// Arithmetic that would overflow throws std::overflow_error; parsing errors throw
// std::invalid_argument with a message naming what was expected.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dtsim {

namespace detail {
[[noreturn]] void throw_overflow(const char* what);
inline int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw_overflow(what);
  return r;
}
inline int64_t checked_sub(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) throw_overflow(what);
  return r;
}
inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw_overflow(what);
  return r;
}
// Rounds a finite double to int64, throwing when it is out of range or not a number.
int64_t checked_round(double v, const char* what);
}  // namespace detail

// A point in simulated time or a duration, in integer picoseconds (range about +-106 days).
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ps(int64_t v) { return Time(v); }
  static Time ns(double v) { return Time(detail::checked_round(v * 1e3, "Time")); }
  static Time us(double v) { return Time(detail::checked_round(v * 1e6, "Time")); }
  static Time ms(double v) { return Time(detail::checked_round(v * 1e9, "Time")); }
  static Time s(double v) { return Time(detail::checked_round(v * 1e12, "Time")); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ps() const { return ps_; }
  constexpr double ns() const { return static_cast<double>(ps_) * 1e-3; }
  constexpr double us() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double ms() const { return static_cast<double>(ps_) * 1e-9; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  Time operator+(Time o) const { return Time(detail::checked_add(ps_, o.ps_, "Time")); }
  Time operator-(Time o) const { return Time(detail::checked_sub(ps_, o.ps_, "Time")); }
  Time& operator+=(Time o) { return *this = *this + o; }
  Time& operator-=(Time o) { return *this = *this - o; }
  Time operator*(int64_t k) const { return Time(detail::checked_mul(ps_, k, "Time")); }
  Time scaled(double k) const { return Time(detail::checked_round(static_cast<double>(ps_) * k, "Time")); }
  constexpr double operator/(Time o) const { return static_cast<double>(ps_) / static_cast<double>(o.ps_); }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(int64_t ps) : ps_(ps) {}
  int64_t ps_ = 0;
};

// A size in bytes (never negative when parsed from user input).
class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(int64_t v) : v_(v) {}
  static constexpr Bytes kib(int64_t v) { return Bytes(v * 1024); }
  static constexpr Bytes mib(int64_t v) { return Bytes(v * 1024 * 1024); }
  static constexpr Bytes gib(int64_t v) { return Bytes(v * 1024 * 1024 * 1024); }

  constexpr int64_t count() const { return v_; }
  constexpr double as_double() const { return static_cast<double>(v_); }

  Bytes operator+(Bytes o) const { return Bytes(detail::checked_add(v_, o.v_, "Bytes")); }
  Bytes operator-(Bytes o) const { return Bytes(detail::checked_sub(v_, o.v_, "Bytes")); }
  Bytes& operator+=(Bytes o) { return *this = *this + o; }
  Bytes operator*(int64_t k) const { return Bytes(detail::checked_mul(v_, k, "Bytes")); }
  constexpr auto operator<=>(const Bytes&) const = default;

 private:
  int64_t v_ = 0;
};

// A data rate, stored as bytes per second. Gbps is 1e9 bits/s, GB/s is 1e9 bytes/s.
class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_s(double v) { return Bandwidth(v); }
  static constexpr Bandwidth gbps(double v) { return Bandwidth(v * 1e9 / 8); }
  static constexpr Bandwidth gbytes_per_s(double v) { return Bandwidth(v * 1e9); }

  constexpr double bytes_per_s() const { return v_; }
  constexpr double gbytes_per_s() const { return v_ * 1e-9; }
  constexpr double gbps() const { return v_ * 8e-9; }
  constexpr bool is_zero() const { return v_ <= 0; }

  // Time to push `b` through this rate, rounded up to the next picosecond; Time::max() at zero rate.
  Time transfer_time(Bytes b) const;
  constexpr Bandwidth operator*(double k) const { return Bandwidth(v_ * k); }
  constexpr Bandwidth operator/(double k) const { return Bandwidth(v_ / k); }
  constexpr Bandwidth operator+(Bandwidth o) const { return Bandwidth(v_ + o.v_); }
  constexpr double operator/(Bandwidth o) const { return v_ / o.v_; }
  constexpr auto operator<=>(const Bandwidth&) const = default;

 private:
  constexpr explicit Bandwidth(double v) : v_(v) {}
  double v_ = 0;
};

// Parsers accept "<number><unit>" with optional spaces: Time needs one of ps ns us ms s;
// Bytes takes B KB MB GB TB (powers of 1000), KiB MiB GiB TiB (powers of 1024), or a bare
// integer; Bandwidth needs Mbps Gbps Tbps (bits) or MB/s GB/s TB/s (bytes). They throw
// std::invalid_argument naming the accepted units, std::overflow_error when out of range.
Time parse_time(std::string_view text);
Bytes parse_bytes(std::string_view text);
Bandwidth parse_bandwidth(std::string_view text);

// Printing round-trips through parsing, in the largest unit that keeps the value >= 1: "1.5us",
// "8GiB", "50GB/s". Bytes print in binary units when the value is a whole multiple, else decimal.
// Bandwidth prints in bytes per second; to_string_bits prints NIC-style bits ("400Gbps").
std::string to_string(Time t);
std::string to_string(Bytes b);
std::string to_string(Bandwidth bw);
std::string to_string_bits(Bandwidth bw);

}  // namespace dtsim
