// The strict plinth/v1 loader's entry points (loader.h): blueprint files
// found on the command line, each file read (its text, then its YAML tree,
// then its documents), and the checks that need every file: references, then
// providers. Shared declarations: loader_internal.h; the YAML tree:
// yaml_tree.cpp; the sections: read_*.cpp; references: references.cpp.
#include "engine/blueprint/loader.h"

#include <algorithm>
#include <filesystem>

#include "engine/blueprint/loader_internal.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"

namespace plinth::bp {
namespace detail {

void Loader::load_text(const std::string& file, const std::string& text) {
  Ctx c{file, &diags_};
  YamlFile yaml;
  if (!parse_yaml(c, text, yaml)) return;
  const std::vector<Node>& docs = yaml.docs;
  if (docs.empty()) {
    c.error("BP004", {file, 1, 1}, "the file is empty: missing required fields 'apiVersion' and 'kind'",
            "start it with 'apiVersion: plinth/v1' and 'kind: Blueprint'");
    return;
  }
  for (const Node& d : docs) load_document(c, d);
}

namespace {

bool is_blueprint_file(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  std::string name = p.filename().string();
  if (ext != ".yaml" && ext != ".yml") return false;
  return name != "waivers.yaml" && name != "waivers.yml" && !starts_with(name, "plinth.");
}

}  // namespace
}  // namespace detail

std::vector<std::string> collect_blueprint_files(const std::vector<std::string>& paths, Diagnostics& diags) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) {
      diags.push_back({"BP000", Severity::Error, "no such file or directory: " + path, {path, 0, 0}, "",
                       "check the path; plinth takes blueprint files or directories of *.yaml files"});
      continue;
    }
    if (!fs::is_directory(st)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(path, ec))
      if (entry.is_regular_file() && detail::is_blueprint_file(entry.path())) found.push_back(entry.path().string());
    if (ec) {
      diags.push_back({"BP000", Severity::Error, "cannot read directory " + path + ": " + ec.message(), {path, 0, 0},
                       "", "check its permissions"});
      continue;
    }
    if (found.empty())
      diags.push_back({"BP000", Severity::Error, "no blueprint files (*.yaml, *.yml) in directory " + path,
                       {path, 0, 0}, "", "point plinth at a directory that holds blueprint files"});
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

LoadResult load_strings(const std::vector<std::pair<std::string, std::string>>& docs, const LoadOptions& options) {
  LoadResult r;
  detail::Loader loader(r.blueprint, r.diagnostics);
  for (const auto& [name, text] : docs) {
    r.blueprint.files.push_back({name, sha256_hex(text)});
    loader.load_text(name, text);
  }
  loader.check_references();
  loader.check_providers(options);
  sort_diagnostics(r.diagnostics);
  return r;
}

LoadResult load_string(const std::string& text, const std::string& name, const LoadOptions& options) {
  return load_strings({{name, text}}, options);
}

LoadResult load_files(const std::vector<std::string>& files, const LoadOptions& options) {
  LoadResult r;
  detail::Loader loader(r.blueprint, r.diagnostics);
  for (const std::string& f : files) {
    auto text = read_file(f);
    if (!text) {
      r.diagnostics.push_back({"BP000", Severity::Error, text.error().message, {f, 0, 0}, "",
                               "check that the file exists and is readable"});
      continue;
    }
    r.blueprint.files.push_back({f, sha256_hex(*text)});
    loader.load_text(f, *text);
  }
  loader.check_references();
  loader.check_providers(options);
  sort_diagnostics(r.diagnostics);
  return r;
}

}  // namespace plinth::bp
