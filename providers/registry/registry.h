#pragma once
// The built-in providers, by name: their schemas (registered with the
// engine's schema registry at start-up) and their factories.
#include <memory>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/provider/provider.h"

namespace plinth {

/// Adds every built-in provider's schema to schema_registry(). Idempotent;
/// call once at start-up (the CLI's main, test mains).
void register_builtin_providers();

/// A new, unconfigured built-in provider `name`. Errors: a name that is not
/// built in (with "did you mean"), or a provider whose schema is built in but
/// that this build cannot run yet (the error says so).
Result<std::unique_ptr<Provider>> make_builtin_provider(const std::string& name);

/// Names of the built-in providers, sorted.
std::vector<std::string> builtin_provider_names();

}  // namespace plinth
