#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/provider/provider.h"

namespace plinth {

/// Creates the provider `config.name` with its options. Errors: an unknown
/// name (listing the known ones, with "did you mean") or an invalid option
/// (naming it).
Result<std::unique_ptr<Provider>> make_provider(const ProviderConfig& config);

/// Names make_provider knows, sorted.
std::vector<std::string> provider_names();

}  // namespace plinth
