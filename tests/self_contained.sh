#!/usr/bin/env bash
# The repository is self-contained: no tracked file reaches outside it. A
# user's clone has nothing beside it (not the project's shared folder, no
# workplace paths), so a file that reads a folder beside the clone, or a path
# that climbs out of the source root, works on this project's machines and
# fails everywhere else. Third-party data lives in tests/data/third_party
# (docs/provenance.md).
#   bash tests/self_contained.sh [SOURCE_ROOT]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  list() { git ls-files -z; }
else  # a source tarball: every file but build trees
  list() { find . -type f -not -path './build*' -not -path './.git/*' -printf '%P\0'; }
fi
# The shared folder beside the clone (spelt with a class so this file does not
# match itself), the workplace's absolute paths, and a source-root variable
# followed by '..' (CMake, shell and Python spellings).
pattern='\.\./sh[a]red|/work/sh[a]red|/work/m[a]in|(CMAKE_SOURCE_DIR\}|\$root|\$src|\$ROOT|ROOT,)[/" ,]*\.\.'
found=$(list | xargs -0 grep -nIE "$pattern" -- 2>/dev/null | head -20 || true)
if [ -n "$found" ]; then
  echo "tracked files refer to paths outside the repository (copy the data into tests/data/third_party with its licence and provenance, and read it from there):"
  echo "$found"
  exit 1
fi
count=$(list | tr -cd '\0' | wc -c)
echo "self-contained: $count files checked, none refers to a path outside the repository"
