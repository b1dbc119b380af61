// plinth version: what this binary is, so a CI log or a bug report says
// exactly which build, catalog and policy packs produced a plan or an audit.
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/cli/build_info.h"
#include "engine/cli/common.h"
#include "engine/core/embedded.h"
#include "engine/core/files.h"

namespace plinth::cli {
using Json = nlohmann::json;
namespace {

/// The built-in packs: the set's version (policies/VERSION) and, per pack,
/// a digest of its files, which changes whenever any of them does.
struct PackVersions {
  std::string version;
  std::vector<std::pair<std::string, std::string>> packs;  ///< name -> 12 hex digits
};

PackVersions pack_versions() {
  PackVersions out;
  const std::string root(kBuiltinPolicyDir);
  if (auto v = read_file(root + "/VERSION")) {
    out.version = *v;
    while (!out.version.empty() && std::isspace(static_cast<unsigned char>(out.version.back()))) out.version.pop_back();
  }
  std::set<std::string> names;
  for (const auto& f : list_files(root)) {
    std::filesystem::path rel = std::filesystem::path(f).lexically_relative(root);
    if (std::distance(rel.begin(), rel.end()) < 2) continue;
    const std::string pack = rel.begin()->string();
    if (pack != "frameworks" && pack != "fixtures" && rel.extension() == ".lua") names.insert(pack);
  }
  for (const auto& n : names) out.packs.emplace_back(n, embedded_digest(root + "/" + n).substr(0, 12));
  return out;
}

int run_version(const Args& args, Io& io) {
  const BuildInfo b = build_info();
  auto cat = load_catalog();
  const char* catalog_dir = std::getenv("PLINTH_CATALOG_DIR");
  const std::string catalog_source =
      catalog_dir && *catalog_dir ? std::string("PLINTH_CATALOG_DIR=") + catalog_dir : "built in";
  const PackVersions packs = pack_versions();
  if (args.flag("json")) {
    Json pj = Json::object();
    for (const auto& [n, d] : packs.packs) pj[n] = {{"digest", d}};
    Json j = {{"version", PLINTH_VERSION},
              {"commit", b.commit.empty() ? Json(nullptr) : Json(b.commit)},
              {"commit_dirty", b.dirty},
              {"catalog", {{"version", cat ? Json(cat->version()) : Json(nullptr)}, {"source", catalog_source}}},
              {"policies", {{"version", packs.version}, {"source", "built in"}, {"packs", pj}}}};
    std::fprintf(io.out, "%s\n", j.dump(2).c_str());
  } else {
    std::fprintf(io.out, "plinth %s\n", PLINTH_VERSION);
    std::fprintf(io.out, "  commit:   %s\n",
                 b.commit.empty() ? "unknown (not built from a git checkout)"
                                  : (b.commit + (b.dirty ? " (with uncommitted changes)" : "")).c_str());
    std::fprintf(io.out, "  catalog:  %s (%s)\n", cat ? cat->version().c_str() : "unreadable",
                 catalog_source.c_str());
    std::string list;
    for (const auto& [n, d] : packs.packs) list += (list.empty() ? "" : ", ") + n + " " + d;
    std::fprintf(io.out, "  policies: %s (built in: %s)\n", packs.version.c_str(), list.c_str());
  }
  if (!cat) return fail(io, "version", "cannot load the catalog: " + cat.error().message);
  return kExitSuccess;
}

const Register version_command({
    "version",
    "plinth version [--json]",
    "Print the version, the git commit it was built from, and the catalog and policy pack versions.",
    "The commit is recorded at build time (with '(with uncommitted changes)' when the\n"
    "checkout had any); the catalog version is that of the data in use (built in, or\n"
    "PLINTH_CATALOG_DIR); each built-in policy pack is named with a digest of its files,\n"
    "so two binaries with the same digests run the same policies. 'plinth --version'\n"
    "prints the same.",
    {
        {"json", "", "Print it as a JSON object."},
    },
    run_version,
    90,
});

}  // namespace
}  // namespace plinth::cli
