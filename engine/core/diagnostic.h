#pragma once
#include <string>
#include <vector>

#include "engine/core/source_location.h"

namespace plinth {

enum class Severity { Error, Warning, Info };
const char* to_string(Severity s);

/// One finding about the user's input: a load error, a validation rule hit, a
/// provider error. `code` is stable (documented in docs/rules.md) so CI and
/// audits can key on it.
struct Diagnostic {
  std::string code;      ///< e.g. "BP001" (loader) or "GPU002" (domain rule)
  Severity severity = Severity::Error;
  std::string message;   ///< what is wrong, one sentence
  SourceLoc loc;         ///< where, when it comes from a file
  std::string address;   ///< resource address, when it is about a resource
  std::string hint;      ///< how to fix it ("did you mean 'train'?")
  /// False when the source line may hold a secret (an inline password): the
  /// excerpt and caret are then left out of the rendered diagnostic.
  bool show_source = true;

  bool operator==(const Diagnostic&) const = default;
};

using Diagnostics = std::vector<Diagnostic>;

bool has_errors(const Diagnostics& ds);
size_t count(const Diagnostics& ds, Severity s);

/// Sorts by file, line, column, then code, keeping the order stable otherwise.
void sort_diagnostics(Diagnostics& ds);

/// Renders one diagnostic the ninja/clang way:
///   blueprints/x.yaml:12:5: error[BP003]: unknown key 'cuda_version' in stack 'train'
///      12 |     cuda_version: "12.4"
///         |     ^
///     hint: did you mean 'cuda'?
/// The source line is read from `loc.file` when it exists. `color` adds ANSI colours.
std::string format_diagnostic(const Diagnostic& d, bool color = false);

}  // namespace plinth
