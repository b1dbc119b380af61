#include "engine/catalog/catalog.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "engine/catalog/embedded.h"
#include "engine/core/files.h"
#include "engine/core/strings.h"

namespace plinth::catalog {

const MigProfile* GpuModel::mig_profile(const std::string& n) const {
  for (const auto& p : mig_profiles)
    if (p.name == n) return &p;
  return nullptr;
}

std::vector<std::string> GpuModel::mig_profile_names() const {
  std::vector<std::string> names;
  for (const auto& p : mig_profiles) names.push_back(p.name);
  return names;
}

namespace {

const std::vector<std::string> kFiles = {"cuda.yaml", "gpus.yaml", "instance_types.yaml"};

// Reads one data file strictly, collecting every problem as "file:line: message".
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  void fail(const YAML::Node& at, const std::string& message) {
    errors_.push_back(file_ + ":" + std::to_string(at.Mark().line + 1) + ": " + message);
  }
  void fail_file(const std::string& message) { errors_.push_back(file_ + ": " + message); }
  const std::vector<std::string>& errors() const { return errors_; }

  // Reports keys of `map` that are not in `allowed`; false when `map` is not a map.
  bool keys(const YAML::Node& map, const std::string& what, const std::vector<std::string>& allowed) {
    if (!map.IsMap()) {
      fail(map, what + " must be a mapping");
      return false;
    }
    for (const auto& kv : map) {
      auto key = kv.first.as<std::string>();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string hint = did_you_mean(key, allowed);
        fail(kv.first, "unknown key '" + key + "' in " + what + (hint.empty() ? "" : "; " + hint));
      }
    }
    return true;
  }

  std::string str(const YAML::Node& map, const std::string& key, const std::string& what, bool required = true) {
    const YAML::Node n = map[key];
    if (!n) {
      if (required) fail(map, what + " has no '" + key + "'");
      return "";
    }
    if (!n.IsScalar() || n.as<std::string>().empty()) {
      fail(n, "'" + key + "' of " + what + " must be a non-empty string");
      return "";
    }
    return n.as<std::string>();
  }

  int integer(const YAML::Node& map, const std::string& key, const std::string& what) {
    const YAML::Node n = map[key];
    if (!n) {
      fail(map, what + " has no '" + key + "'");
      return 0;
    }
    try {
      int v = n.as<int>();
      if (v >= 0) return v;
    } catch (const YAML::Exception&) {
    }
    fail(n, "'" + key + "' of " + what + " must be a whole number >= 0");
    return 0;
  }

  bool boolean(const YAML::Node& map, const std::string& key, const std::string& what) {
    const YAML::Node n = map[key];
    if (!n) {
      fail(map, what + " has no '" + key + "'");
      return false;
    }
    try {
      return n.as<bool>();
    } catch (const YAML::Exception&) {
      fail(n, "'" + key + "' of " + what + " must be true or false");
      return false;
    }
  }

  std::vector<std::string> strings(const YAML::Node& map, const std::string& key, const std::string& what) {
    std::vector<std::string> out;
    const YAML::Node n = map[key];
    if (!n) return out;
    if (!n.IsSequence()) {
      fail(n, "'" + key + "' of " + what + " must be a list of strings");
      return out;
    }
    for (const auto& e : n) {
      if (e.IsScalar()) out.push_back(e.as<std::string>());
      else fail(e, "'" + key + "' of " + what + " must be a list of strings");
    }
    return out;
  }

  // The file header: `version:` and `sources:` (a map of source id -> citation).
  std::string header(const YAML::Node& root, std::set<std::string>& sources) {
    std::string version = str(root, "version", "the file");
    const YAML::Node s = root["sources"];
    if (!s || !s.IsMap() || s.size() == 0) {
      fail(s ? s : root, "'sources' must map each source id to its citation");
    } else {
      for (const auto& kv : s) sources.insert(kv.first.as<std::string>());
    }
    return version;
  }

  // A row's `source:` must name at least one of the file's sources.
  std::string source(const YAML::Node& row, const std::string& what, const std::set<std::string>& sources) {
    std::string s = str(row, "source", what);
    if (s.empty()) return s;
    bool cited = std::any_of(sources.begin(), sources.end(), [&](const std::string& id) { return s.find(id) != std::string::npos; });
    if (!cited)
      fail(row["source"], "the source of " + what + " names none of the file's sources (" +
                              join(std::vector<std::string>(sources.begin(), sources.end()), ", ") + ")");
    return s;
  }

 private:
  std::string file_;
  std::vector<std::string> errors_;
};

bool is_version(const std::string& v, int parts) {
  int n = 0;
  size_t i = 0;
  while (i < v.size()) {
    size_t j = i;
    while (j < v.size() && std::isdigit(static_cast<unsigned char>(v[j]))) ++j;
    if (j == i) return false;
    ++n;
    if (j == v.size()) break;
    if (v[j] != '.') return false;
    i = j + 1;
    if (i == v.size()) return false;
  }
  return parts == 0 ? n >= 1 : n == parts;
}

}  // namespace

struct CatalogParser {
  Catalog& cat;
  std::vector<std::string> errors;
  // Instance type rows name GPUs; they are checked once every file is read.
  struct GpuRef {
    std::string file;
    int line;
    std::string gpu;
    std::string instance;
  };
  std::vector<GpuRef> gpu_refs;

  void parse_gpus(Reader& r, const YAML::Node& root, const std::set<std::string>& sources) {
    const YAML::Node list = root["gpus"];
    if (!list || !list.IsSequence()) {
      r.fail(list ? list : root, "'gpus' must be a list of GPU models");
      return;
    }
    for (const auto& row : list) {
      if (!r.keys(row, "a GPU model", {"name", "product_name", "aliases", "architecture", "compute_capability", "min_cuda",
                                        "memory_gb", "ecc", "nvlink", "source", "mig"}))
        continue;
      GpuModel g;
      g.name = r.str(row, "name", "a GPU model");
      std::string what = "GPU model '" + g.name + "'";
      g.product_name = r.str(row, "product_name", what);
      g.aliases = r.strings(row, "aliases", what);
      g.architecture = r.str(row, "architecture", what);
      g.compute_capability = r.str(row, "compute_capability", what);
      g.min_cuda = r.str(row, "min_cuda", what);
      if (!g.min_cuda.empty() && !is_version(g.min_cuda, 2)) r.fail(row["min_cuda"], "'min_cuda' of " + what + " must look like \"11.8\"");
      g.memory_gb = r.integer(row, "memory_gb", what);
      g.ecc = r.boolean(row, "ecc", what);
      g.nvlink = r.boolean(row, "nvlink", what);
      g.source = r.source(row, what, sources);
      if (const YAML::Node mig = row["mig"]) parse_mig(r, mig, g, what);
      if (g.name.empty()) continue;
      if (cat.gpus_.count(g.name) || cat.gpu_aliases_.count(g.name)) {
        r.fail(row, "duplicate GPU model '" + g.name + "'");
        continue;
      }
      for (const auto& a : g.aliases) {
        if (cat.gpus_.count(a) || cat.gpu_aliases_.count(a)) r.fail(row["aliases"], "alias '" + a + "' of " + what + " is already used");
        else cat.gpu_aliases_[a] = g.name;
      }
      if (!cat.gpu_aliases_.count(g.product_name) && !cat.gpus_.count(g.product_name) && !g.product_name.empty())
        cat.gpu_aliases_[g.product_name] = g.name;
      cat.gpus_[g.name] = std::move(g);
    }
  }

  void parse_mig(Reader& r, const YAML::Node& mig, GpuModel& g, const std::string& what) {
    if (!r.keys(mig, "the MIG section of " + what, {"max_instances", "compute_slices", "memory_slices", "profiles"})) return;
    std::string w = "the MIG section of " + what;
    g.mig_max_instances = r.integer(mig, "max_instances", w);
    g.mig_compute_slices = r.integer(mig, "compute_slices", w);
    g.mig_memory_slices = r.integer(mig, "memory_slices", w);
    const YAML::Node profiles = mig["profiles"];
    if (!profiles || !profiles.IsSequence() || profiles.size() == 0) {
      r.fail(profiles ? profiles : mig, w + " must list its 'profiles'");
      return;
    }
    for (const auto& row : profiles) {
      if (!r.keys(row, "a MIG profile of " + what, {"name", "compute_slices", "memory_slices", "memory_gb", "max_count"})) continue;
      MigProfile p;
      p.name = r.str(row, "name", "a MIG profile of " + what);
      std::string pw = "MIG profile '" + p.name + "' of " + what;
      p.compute_slices = r.integer(row, "compute_slices", pw);
      p.memory_slices = r.integer(row, "memory_slices", pw);
      p.memory_gb = r.integer(row, "memory_gb", pw);
      p.max_count = r.integer(row, "max_count", pw);
      if (p.compute_slices > g.mig_compute_slices || p.memory_slices > g.mig_memory_slices || p.max_count > g.mig_max_instances ||
          p.memory_gb > g.memory_gb)
        r.fail(row, pw + " is larger than the GPU (" + std::to_string(g.mig_compute_slices) + " compute slices, " +
                        std::to_string(g.mig_memory_slices) + " memory slices, " + std::to_string(g.mig_max_instances) +
                        " instances, " + std::to_string(g.memory_gb) + " GB)");
      if (g.mig_profile(p.name)) r.fail(row, "duplicate " + pw);
      else g.mig_profiles.push_back(std::move(p));
    }
  }

  void parse_cuda(Reader& r, const YAML::Node& root, const std::set<std::string>& sources) {
    const YAML::Node list = root["toolkits"];
    if (!list || !list.IsSequence()) {
      r.fail(list ? list : root, "'toolkits' must be a list of CUDA toolkit releases");
      return;
    }
    for (const auto& row : list) {
      if (!r.keys(row, "a CUDA toolkit row", {"cuda", "min_driver", "ga", "source"})) continue;
      std::string cuda = r.str(row, "cuda", "a CUDA toolkit row");
      std::string what = "CUDA " + cuda;
      std::string driver = r.str(row, "min_driver", what);
      bool ga = row["ga"] ? r.boolean(row, "ga", what) : false;
      r.source(row, what, sources);
      if (!cuda.empty() && !is_version(cuda, 3)) {
        r.fail(row["cuda"], "CUDA version '" + cuda + "' must be major.minor.patch, e.g. \"12.4.1\"");
        continue;
      }
      if (!driver.empty() && !is_version(driver, 0)) {
        r.fail(row["min_driver"], "driver version '" + driver + "' of " + what + " must look like \"550.54.15\"");
        continue;
      }
      if (cuda.empty() || driver.empty()) continue;
      if (!cat.cuda_min_driver_.emplace(cuda, driver).second) {
        r.fail(row, "duplicate " + what);
        continue;
      }
      if (ga) {
        std::string minor = cuda.substr(0, cuda.rfind('.'));
        if (!cat.cuda_ga_.emplace(minor, cuda).second) r.fail(row, "CUDA " + minor + " has two GA rows");
      }
    }
  }

  void parse_instance_types(Reader& r, const std::string& file, const YAML::Node& root, const std::set<std::string>& sources) {
    const YAML::Node providers = root["instance_types"];
    if (!providers || !providers.IsMap()) {
      r.fail(providers ? providers : root, "'instance_types' must map each cloud provider's name to its instance types");
      return;
    }
    for (const auto& kv : providers) {
      auto provider = kv.first.as<std::string>();
      if (provider.empty() || !std::all_of(provider.begin(), provider.end(), [](char ch) {
            return std::islower(static_cast<unsigned char>(ch)) || std::isdigit(static_cast<unsigned char>(ch)) ||
                   ch == '-' || ch == '_';
          })) {
        r.fail(kv.first, "'" + provider + "' is not a provider name (lower-case letters, digits, '-', '_')");
        continue;
      }
      if (!kv.second.IsSequence()) {
        r.fail(kv.second, "the " + provider + " instance types must be a list");
        continue;
      }
      auto& types = cat.instance_types_[provider];
      for (const auto& row : kv.second) {
        if (!r.keys(row, "an instance type", {"name", "gpu", "gpu_count", "vcpus", "memory_gb", "source"})) continue;
        InstanceType t;
        t.provider = provider;
        t.name = r.str(row, "name", "a " + provider + " instance type");
        std::string what = provider + " instance type '" + t.name + "'";
        t.gpu = r.str(row, "gpu", what);
        t.gpu_count = r.integer(row, "gpu_count", what);
        t.vcpus = r.integer(row, "vcpus", what);
        t.memory_gb = r.integer(row, "memory_gb", what);
        t.source = r.source(row, what, sources);
        if (t.gpu_count == 0 && row["gpu_count"]) r.fail(row["gpu_count"], "'gpu_count' of " + what + " must be at least 1");
        if (t.name.empty()) continue;
        if (!t.gpu.empty()) gpu_refs.push_back({file, row.Mark().line + 1, t.gpu, what});
        if (types.count(t.name)) r.fail(row, "duplicate " + what);
        else types[t.name] = std::move(t);
      }
    }
  }
};

Result<Catalog> Catalog::load_texts(const std::vector<std::pair<std::string, std::string>>& files) {
  Catalog cat;
  CatalogParser parser{cat, {}, {}};
  std::set<std::string> seen;
  for (const auto& [name, text] : files) {
    Reader r(name);
    std::string base = std::filesystem::path(name).filename().string();
    if (std::find(kFiles.begin(), kFiles.end(), base) == kFiles.end()) {
      std::string hint = did_you_mean(base, kFiles);
      r.fail_file("unknown catalog file; the catalog has " + join(kFiles, ", ") + (hint.empty() ? "" : " (" + hint + ")"));
    } else if (!seen.insert(base).second) {
      r.fail_file("given twice");
    } else {
      try {
        YAML::Node root = YAML::Load(text);
        if (!root.IsMap()) {
          r.fail_file("must be a YAML mapping with 'version', 'sources' and the data");
        } else {
          std::string data_key = base == "gpus.yaml" ? "gpus" : base == "cuda.yaml" ? "toolkits" : "instance_types";
          r.keys(root, "the file", {"version", "sources", data_key});
          std::set<std::string> sources;
          std::string version = r.header(root, sources);
          if (!version.empty() && (cat.version_.empty() || compare_versions(version, cat.version_) > 0)) cat.version_ = version;
          if (base == "gpus.yaml") parser.parse_gpus(r, root, sources);
          else if (base == "cuda.yaml") parser.parse_cuda(r, root, sources);
          else parser.parse_instance_types(r, name, root, sources);
        }
      } catch (const YAML::ParserException& e) {
        parser.errors.push_back(name + ":" + std::to_string(e.mark.line + 1) + ": YAML syntax error: " + e.msg);
      }
    }
    parser.errors.insert(parser.errors.end(), r.errors().begin(), r.errors().end());
  }
  for (const auto& f : kFiles)
    if (!seen.count(f)) parser.errors.push_back(f + ": missing; the catalog needs " + join(kFiles, ", "));
  for (const auto& ref : parser.gpu_refs) {
    if (cat.gpu(ref.gpu)) continue;
    std::string hint = did_you_mean(ref.gpu, cat.gpu_names());
    parser.errors.push_back(ref.file + ":" + std::to_string(ref.line) + ": " + ref.instance + " names GPU '" + ref.gpu +
                            "', which gpus.yaml does not list" + (hint.empty() ? "" : "; " + hint));
  }
  if (!parser.errors.empty()) return Error::invalid("invalid catalog data:\n  " + join(parser.errors, "\n  "));
  return cat;
}

Result<Catalog> Catalog::load_embedded() {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& f : embedded_files()) files.emplace_back(std::string(f.name), std::string(f.text));
  return load_texts(files);
}

Result<Catalog> Catalog::load_dir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Error::invalid("catalog directory '" + dir + "' does not exist; set PLINTH_CATALOG_DIR to a folder holding " + join(kFiles, ", "));
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& f : kFiles) {
    std::string path = (std::filesystem::path(dir) / f).string();
    if (!std::filesystem::exists(path, ec)) continue;  // reported as missing by load_texts
    auto text = read_file(path);
    if (!text) return text.error();
    files.emplace_back(path, *text);
  }
  return load_texts(files);
}

const GpuModel* Catalog::gpu(const std::string& name) const {
  auto it = gpus_.find(name);
  if (it != gpus_.end()) return &it->second;
  auto a = gpu_aliases_.find(name);
  return a == gpu_aliases_.end() ? nullptr : &gpus_.at(a->second);
}

const InstanceType* Catalog::instance_type(const std::string& provider, const std::string& name) const {
  auto p = instance_types_.find(provider);
  if (p == instance_types_.end()) return nullptr;
  auto it = p->second.find(name);
  return it == p->second.end() ? nullptr : &it->second;
}

std::optional<std::string> Catalog::resolve_cuda(const std::string& cuda) const {
  if (cuda_min_driver_.count(cuda)) return cuda;
  auto ga = cuda_ga_.find(cuda);
  if (ga != cuda_ga_.end()) return ga->second;
  return std::nullopt;
}

std::optional<std::string> Catalog::min_driver_for_cuda(const std::string& cuda) const {
  auto full = resolve_cuda(cuda);
  if (!full) return std::nullopt;
  return cuda_min_driver_.at(*full);
}

std::vector<std::string> Catalog::gpu_names() const {
  std::vector<std::string> out;
  for (const auto& [name, g] : gpus_) out.push_back(name);
  return out;
}

std::vector<std::string> Catalog::instance_type_names(const std::string& provider) const {
  std::vector<std::string> out;
  auto p = instance_types_.find(provider);
  if (p != instance_types_.end())
    for (const auto& [name, t] : p->second) out.push_back(name);
  return out;
}

std::vector<std::string> Catalog::cuda_versions() const {
  std::vector<std::string> out;
  for (const auto& [v, d] : cuda_min_driver_) out.push_back(v);
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return compare_versions(a, b) < 0; });
  return out;
}

std::vector<std::string> Catalog::providers() const {
  std::vector<std::string> out;
  for (const auto& [p, t] : instance_types_) out.push_back(p);
  return out;
}

}  // namespace plinth::catalog
