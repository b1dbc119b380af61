#pragma once
// Which allocator this plinth uses and how it is set (allocator.cpp says why
// jemalloc with transparent huge pages).
#include <string>

namespace plinth::cli {

/// "jemalloc 5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c, thp:always", or what a build without it uses.
std::string allocator_description();

}  // namespace plinth::cli
