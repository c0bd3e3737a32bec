// InputError: a mistake a user made in something they wrote (a scenario, a measurement file, a
// flag). It carries where the mistake is, so that `what()` is one line a user can act on:
//   scenarios/x.yaml:12:5: cluster.nodes: expected a positive integer, got "-3"
// Programs catch it at the top and exit with status 2. Assertions are for programmer errors.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace dtsim {

struct SourceLocation {
  std::string file;  // empty when the input has no file (a --set flag, a string)
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown
};

class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, std::string key, std::string message);
  explicit InputError(std::string message);

  const SourceLocation& where() const { return where_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string key_;
  std::string message_;
};

// The whole of a file a user named (under `key`, for the message): an InputError when it is not
// there, is not a regular file (a folder, /dev/zero), or is larger than `max_bytes`.
std::string read_input_file(const std::string& path, const std::string& key, std::uintmax_t max_bytes = std::uintmax_t{1} << 30);

}  // namespace dtsim
