#include "engine/cli/common.h"

#include <cstdlib>

#include "engine/cli/options.h"
#include "engine/cli/render_events.h"
#include "engine/core/strings.h"

namespace plinth::cli {

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
  return run::check_blueprint(paths, provider_factory());
}

std::optional<Loaded> load_blueprint(const std::vector<std::string>& paths, Io& io,
                                     const std::function<void(const Checked&)>& report) {
  HumanView view(io, "");
  return run::load_blueprint(paths, provider_factory(), view, report);
}

std::optional<Loaded> load_blueprint(const std::vector<std::string>& paths, Io& io) {
  return load_blueprint(paths, io, nullptr);
}

}  // namespace plinth::cli
