#pragma once
#include <string>

#include "engine/catalog/catalog.h"

namespace plinth::catalog {

/// docs/catalog.md: every file, GPU, architecture, CUDA release (with the
/// minimum driver and what a major.minor pin installs) and software fact of `catalog`, with the sources. `plinth catalog --markdown`
/// prints it; a test keeps the file equal to it.
std::string catalog_markdown(const Catalog& catalog);

}  // namespace plinth::catalog
