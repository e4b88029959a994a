// stiffgrad — MJCF loader, private: ParsedModel -> Model.
#pragma once

#include <memory>
#include <string>

#include "host/mjcf_spec.hpp"
#include "stiffgrad/model.hpp"

namespace stiffgrad::mjcf {

// Throws MjcfError (pointing at the offending element) for anything MuJoCo would reject or
// stiffgrad does not support.
std::shared_ptr<Model> compile_model(const ParsedModel& pm, const std::string& file);

}  // namespace stiffgrad::mjcf
