// stiffgrad — MJCF loader, private: ParsedModel -> Model.
#pragma once

#include <memory>
#include <string>

#include "mjcf/spec.hpp"
#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/model.hpp"

namespace stiffgrad::mjcf {

// Throws MjcfError (pointing at the offending element) for anything MuJoCo would reject or
// stiffgrad does not support. `notes` (may be null) receives what the compile reinterpreted
// (the visual-only geoms it dropped).
std::shared_ptr<Model> compile_model(const ParsedModel& pm, const std::string& file, LoadNotes* notes = nullptr);

}  // namespace stiffgrad::mjcf
