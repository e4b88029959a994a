// stiffgrad — MJCF loader, private: walking the document into a ParsedModel.
#pragma once

#include "mjcf/defaults.hpp"
#include "mjcf/spec.hpp"
#include "stiffgrad/mjcf.hpp"

namespace stiffgrad::mjcf {

// Reads the whole document rooted at `main` (includes expanded through ctx). The returned
// specs point into ctx's documents, so ctx must outlive compilation.
ParsedModel parse_document(IncludeContext& ctx, const Source& main, LoadNotes* notes);

}  // namespace stiffgrad::mjcf
