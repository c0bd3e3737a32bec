#include "sim/error.h"

#include <filesystem>
#include <fstream>

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

std::string read_input_file(const std::string& path, const std::string& key, std::uintmax_t max_bytes) {
  const SourceLocation at{path, 0, 0};
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw InputError(at, key, "cannot open the file (no such file)");
  // Regular files and pipes (a shell's <(...)) are read; folders and devices (/dev/zero) are not.
  if (!std::filesystem::is_regular_file(status) && !std::filesystem::is_fifo(status)) {
    throw InputError(at, key, "not a file to read (a folder or a device)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(at, key, "cannot open the file (not readable)");
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      throw InputError(at, key, "the file holds more than the " + std::to_string(max_bytes) + " bytes this reader takes");
    }
  }
  if (in.bad()) throw InputError(at, key, "cannot read the file");
  return text;
}

}  // namespace dtsim
