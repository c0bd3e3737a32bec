// Model presets for training workloads ("gpt3-175b", "llama3-70b", ...): the transformer shape a
// scenario starts from before its own `model:` keys override single fields.
#pragma once

#include <string_view>
#include <vector>

#include "workloads/workload_spec.h"

namespace dtsim::workloads {

const ModelSpec* find_model_preset(std::string_view name);
std::vector<std::string_view> model_preset_names();

}  // namespace dtsim::workloads
