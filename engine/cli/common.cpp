#include "engine/cli/common.h"

#include <cstdlib>

#include "engine/blueprint/loader.h"
#include "engine/cli/plugins.h"
#include "engine/core/hash.h"
#include "engine/core/strings.h"
#include "engine/validate/validate.h"

namespace plinth::cli {

Result<catalog::Catalog> load_catalog() {
  // The same catalog the renderer and the policies use (catalog::default_catalog).
  auto cat = catalog::default_catalog();
  if (!cat) return cat.error();
  return **cat;
}

void print_diagnostics(const Diagnostics& ds, Io& io) {
  bool color = io.err_tty && !std::getenv("NO_COLOR");
  for (const auto& d : ds) std::fputs(format_diagnostic(d, color).c_str(), io.err);
}

int fail(Io& io, const std::string& command, const std::string& message) {
  // Messages quote user input (paths, values): never let it drive the terminal.
  std::fprintf(io.err, "plinth %s: %s\n", command.c_str(), safe_text(message).c_str());
  return kExitFailure;
}

Checked check_blueprint(const std::vector<std::string>& paths) {
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
  options.resolve_provider = resolve_for_loader;
  auto loaded = bp::load_files(files, options);
  diags = loaded.diagnostics;
  if (!loaded.ok()) {
    out.failed_at = Checked::Stage::Load;
    return out;
  }
  auto cat = load_catalog();
  if (!cat) {
    out.fatal = "cannot load the catalog: " + cat.error().message;
    return out;
  }
  Diagnostics domain = validate::validate(loaded.blueprint, *cat);
  diags.insert(diags.end(), domain.begin(), domain.end());
  sort_diagnostics(diags);
  if (has_errors(diags)) return out;
  out.loaded = Loaded{std::move(loaded.blueprint), std::move(*cat), diags};
  return out;
}

std::optional<Loaded> load_blueprint(const std::vector<std::string>& paths, Io& io,
                                     const std::function<void(const Checked&)>& report) {
  Checked c = check_blueprint(paths);
  if (!c.fatal.empty()) {
    print_diagnostics(c.diagnostics, io);
    std::fprintf(io.err, "plinth: %s\n", safe_text(c.fatal).c_str());
    return std::nullopt;
  }
  print_diagnostics(c.diagnostics, io);
  if (c.loaded) return std::move(c.loaded);
  const size_t errors = count(c.diagnostics, Severity::Error), warnings = count(c.diagnostics, Severity::Warning);
  if (c.failed_at == Checked::Stage::Load) std::fprintf(io.err, "%zu error(s); fix them and run again.\n", errors);
  if (c.failed_at == Checked::Stage::Rules)
    std::fprintf(io.err, "%zu error(s), %zu warning(s); fix the errors and run again.\n", errors, warnings);
  if (report) report(c);
  return std::nullopt;
}

std::optional<Loaded> load_blueprint(const std::vector<std::string>& paths, Io& io) {
  return load_blueprint(paths, io, nullptr);
}

}  // namespace plinth::cli
