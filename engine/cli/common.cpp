#include "engine/cli/common.h"

#include <cstdlib>

#include "engine/blueprint/loader.h"
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
  std::fprintf(io.err, "plinth %s: %s\n", command.c_str(), message.c_str());
  return kExitFailure;
}

std::optional<Loaded> load_blueprint(const std::vector<std::string>& paths, Io& io) {
  if (paths.empty()) {
    std::fprintf(io.err, "plinth: no blueprint given; pass blueprint files or directories (e.g. blueprints/examples/lab.yaml)\n");
    return std::nullopt;
  }
  Diagnostics diags;
  auto files = bp::collect_blueprint_files(paths, diags);
  if (has_errors(diags) || files.empty()) {
    if (files.empty() && !has_errors(diags))
      diags.push_back({"BP000", Severity::Error, "no blueprint files (*.yaml, *.yml) found in " + join(paths, ", "), {}, "", ""});
    print_diagnostics(diags, io);
    return std::nullopt;
  }
  auto loaded = bp::load_files(files);
  if (!loaded.ok()) {
    print_diagnostics(loaded.diagnostics, io);
    std::fprintf(io.err, "%zu error(s); fix them and run again.\n", count(loaded.diagnostics, Severity::Error));
    return std::nullopt;
  }
  auto cat = load_catalog();
  if (!cat) {
    std::fprintf(io.err, "plinth: cannot load the catalog: %s\n", cat.error().message.c_str());
    return std::nullopt;
  }
  Diagnostics all = loaded.diagnostics;
  Diagnostics domain = validate::validate(loaded.blueprint, *cat);
  all.insert(all.end(), domain.begin(), domain.end());
  sort_diagnostics(all);
  print_diagnostics(all, io);
  if (has_errors(all)) {
    std::fprintf(io.err, "%zu error(s), %zu warning(s); fix the errors and run again.\n", count(all, Severity::Error),
                 count(all, Severity::Warning));
    return std::nullopt;
  }
  return Loaded{std::move(loaded.blueprint), std::move(*cat), std::move(all)};
}

}  // namespace plinth::cli
