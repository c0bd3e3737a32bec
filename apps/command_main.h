// The exit-status contract every dtsim command keeps: 0 done (or the command's own status),
// 2 bad input (an InputError, printed as one line naming the place and key), 1 internal error.
//   int main(int argc, char** argv) { return command_main("validate", [&] { return run(argc, argv); }); }
#pragma once

#include <exception>
#include <iostream>
#include <string_view>

#include "sim/error.h"

namespace dtsim::apps {

template <class Run>
int command_main(std::string_view program, Run&& run) {
  try {
    return run();
  } catch (const InputError& e) {
    std::cerr << program << ": " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": internal error: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace dtsim::apps
