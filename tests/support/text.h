#pragma once
// Text helpers the tests share: searching and editing a program's output or a
// blueprint's text, and diagnostics as text.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "engine/core/diagnostic.h"

namespace plinth::test {

/// Whether `text` holds `part`.
bool contains(const std::string& text, const std::string& part);

/// How many times `needle` occurs in `text` (overlapping occurrences count).
size_t count_of(const std::string& text, const std::string& needle);

/// `s` with its first `from` replaced by `to`; `from` must occur (the test fails otherwise).
std::string replace_once(std::string s, const std::string& from, const std::string& to);

/// `s` with every `from` replaced by `to`.
std::string replace_all(std::string s, const std::string& from, const std::string& to);

/// Every diagnostic of `ds` as plinth prints it, one after the other.
std::string diagnostics_text(const Diagnostics& ds);

/// The apply summary's placement lines for `where` (placement text, e.g.
/// "instance_type T, zone Z" -> the pool's indices placed so), as
/// docs/apply.md gives them: "Placement:\n  N x POOL: PLACEMENT: [0..2, 5]\n"...
std::string placement_lines(const std::string& pool, std::map<std::string, std::vector<int>> where);

}  // namespace plinth::test
