#include "engine/run/blueprint.h"

#include "engine/blueprint/loader.h"
#include "engine/core/hash.h"
#include "engine/core/strings.h"
#include "engine/validate/validate.h"

namespace plinth::run {

Result<catalog::Catalog> load_catalog() {
  // The same catalog the renderer and the policies use (catalog::default_catalog).
  auto cat = catalog::default_catalog();
  if (!cat) return cat.error();
  return **cat;
}

Checked check_blueprint(const std::vector<std::string>& paths, ProviderFactory& factory) {
  Checked out;
  if (paths.empty()) {
    out.fatal = "no blueprint given; pass blueprint files or directories (e.g. blueprints/examples/lab.yaml)";
    return out;
  }
  Diagnostics& diags = out.diagnostics;
  auto files = bp::collect_blueprint_files(paths, diags);
  for (const auto& f : files) out.files.push_back({f, sha256_file(f)});
  if (has_errors(diags) || files.empty()) {
    if (files.empty() && !has_errors(diags))
      diags.push_back({"BP000", Severity::Error, "no blueprint files (*.yaml, *.yml) found in " + join(paths, ", "), {}, "", ""});
    out.failed_at = Checked::Stage::Files;
    return out;
  }
  bp::LoadOptions options;
  options.resolve_provider = [&factory](const std::string& name, const bp::ProviderDecl* declared) {
    return factory.resolve(name, declared);
  };
  auto loaded = bp::load_files(files, options);
  diags = loaded.diagnostics;
  auto cat = load_catalog();
  if (!cat) {
    out.fatal = "cannot load the catalog: " + cat.error().message;
    return out;
  }
  if (!loaded.ok()) {
    // Every error of one run together: the domain rules over the entities
    // the loader's errors leave untouched.
    Diagnostics domain = validate::validate_beside_load_errors(loaded.blueprint, *cat, diags);
    diags.insert(diags.end(), domain.begin(), domain.end());
    sort_diagnostics(diags);
    out.failed_at = Checked::Stage::Load;
    return out;
  }
  Diagnostics domain = validate::validate(loaded.blueprint, *cat);
  diags.insert(diags.end(), domain.begin(), domain.end());
  sort_diagnostics(diags);
  if (has_errors(diags)) return out;
  out.loaded = Loaded{std::move(loaded.blueprint), std::move(*cat), diags};
  return out;
}

std::optional<Loaded> load_blueprint(const std::vector<std::string>& paths, ProviderFactory& factory,
                                     Events& events, const std::function<void(const Checked&)>& on_invalid) {
  Checked c = check_blueprint(paths, factory);
  events.diagnostics(c.diagnostics);
  if (!c.fatal.empty()) {
    events.note("plinth: " + safe_text(c.fatal));
    return std::nullopt;
  }
  if (c.loaded) return std::move(c.loaded);
  const size_t errors = count(c.diagnostics, Severity::Error), warnings = count(c.diagnostics, Severity::Warning);
  if (c.failed_at == Checked::Stage::Load) events.note(std::to_string(errors) + " error(s); fix them and run again.");
  if (c.failed_at == Checked::Stage::Rules)
    events.note(std::to_string(errors) + " error(s), " + std::to_string(warnings) +
                " warning(s); fix the errors and run again.");
  if (on_invalid) on_invalid(c);
  return std::nullopt;
}

}  // namespace plinth::run
