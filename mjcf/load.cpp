// stiffgrad — MJCF loading entry points (include/stiffgrad/mjcf.hpp).
#include "mjcf/compile.hpp"
#include "mjcf/parse.hpp"
#include "mjcf/xml.hpp"
#include "stiffgrad/mjcf.hpp"

namespace stiffgrad {

std::shared_ptr<const Model> load_mjcf(const std::string& path, LoadNotes* notes) {
  mjcf::IncludeContext ctx;
  const mjcf::Source& main = ctx.load_main_file(path);
  LoadNotes local;
  mjcf::ParsedModel pm = mjcf::parse_document(ctx, main, &local);
  auto model = mjcf::compile_model(pm, path, &local);
  // Notes are only handed out for a model that loaded.
  if (notes) notes->notes.insert(notes->notes.end(), local.notes.begin(), local.notes.end());
  return model;
}

std::shared_ptr<const Model> load_mjcf_string(const std::string& xml,
                                              const std::string& virtual_path,
                                              LoadNotes* notes) {
  mjcf::IncludeContext ctx;
  const mjcf::Source& main = ctx.load_main_string(xml, virtual_path);
  LoadNotes local;
  mjcf::ParsedModel pm = mjcf::parse_document(ctx, main, &local);
  auto model = mjcf::compile_model(pm, virtual_path, &local);
  if (notes) notes->notes.insert(notes->notes.end(), local.notes.begin(), local.notes.end());
  return model;
}

}  // namespace stiffgrad
