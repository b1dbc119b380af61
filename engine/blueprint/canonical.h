#pragma once
// plinth fmt: the canonical layout of a blueprint file, keeping every comment
// (docs/blueprint.md, "Formatting"). Text in, text out; the formatted text
// holds the same YAML data as the input, which is checked before it is
// returned, so formatting can never change what a blueprint says.
#include <string>

#include "engine/core/result.h"

namespace plinth::bp {

/// `text` (the file `name`) in canonical form:
///   - line ends are "\n", no line ends in spaces or tabs, the file ends in
///     exactly one newline, and never two blank lines follow each other;
///   - the top-level sections are in the order docs/blueprint.md lists them
///     (apiVersion, kind, metadata, stacks, networks, storage, node_pools,
///     burst_pools, access, monitoring, clusters, providers), each moved with
///     the comments right above it; a file with several YAML documents or a
///     top level that is not a block mapping keeps its order;
///   - everything else (indentation, quoting, flow or block style, the order
///     of keys inside a section) is left as written.
/// A tab in indentation or YAML that does not parse is an error naming
/// file:line; so is a result whose data differ from the input's (a bug).
Result<std::string> canonical_text(const std::string& text, const std::string& name);

}  // namespace plinth::bp
