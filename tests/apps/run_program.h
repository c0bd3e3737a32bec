// Runs one of dtsim's programs as a user does, from the source directory (so that messages name
// relative paths), and returns its exit status, stdout and stderr.
//   RunResult r = run_program(DTSIM_SIMULATE, {"scenarios/default.yaml", "--dry-run"});
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dtsim::testing {

struct RunResult {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string shell_quote(const std::string& s) {
  std::ostringstream out;
  out << '\'';
  for (char c : s) {
    if (c == '\'') out << "'\\''";
    else out << c;
  }
  out << '\'';
  return out.str();
}

inline RunResult run_program(const std::string& program, const std::vector<std::string>& args) {
  static int counter = 0;
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("dtsim_run_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  std::ostringstream cmd;
  cmd << "cd " << shell_quote(DTSIM_SOURCE_DIR) << " && " << shell_quote(program);
  for (const auto& a : args) cmd << ' ' << shell_quote(a);
  cmd << " >" << shell_quote((dir / "out").string()) << " 2>" << shell_quote((dir / "err").string());
  const int raw = std::system(cmd.str().c_str());
  RunResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace dtsim::testing
