#include "sim/error.h"

namespace dtsim {
namespace {

std::string format_error(const SourceLocation& where, const std::string& key,
                         const std::string& message) {
  std::string out;
  if (!where.file.empty()) out += where.file;
  if (where.line > 0) {
    out.append(out.empty() ? "line " : ":").append(std::to_string(where.line));
    if (where.column > 0) out.append(":").append(std::to_string(where.column));
  }
  if (!out.empty()) out += ": ";
  if (!key.empty()) out += key + ": ";
  out += message;
  return out;
}

}  // namespace

InputError::InputError(SourceLocation where, std::string key, std::string message)
    : std::runtime_error(format_error(where, key, message)),
      where_(std::move(where)),
      key_(std::move(key)),
      message_(std::move(message)) {}

InputError::InputError(std::string message)
    : std::runtime_error(message), message_(std::move(message)) {}

}  // namespace dtsim
