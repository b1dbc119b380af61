#include "engine/catalog/catalog.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <tuple>
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

const std::vector<std::string> kFiles = {"cuda.yaml", "gpus.yaml", "software.yaml"};

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

  int integer(const YAML::Node& map, const std::string& key, const std::string& what, bool required = true) {
    const YAML::Node n = map[key];
    if (!n) {
      if (required) fail(map, what + " has no '" + key + "'");
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

  bool boolean(const YAML::Node& map, const std::string& key, const std::string& what, bool required = true) {
    const YAML::Node n = map[key];
    if (!n) {
      if (required) fail(map, what + " has no '" + key + "'");
      return false;
    }
    try {
      return n.as<bool>();
    } catch (const YAML::Exception&) {
      fail(n, "'" + key + "' of " + what + " must be true or false");
      return false;
    }
  }

  /// An optional string that must be one of `allowed` ("" when absent).
  std::string one_of(const YAML::Node& map, const std::string& key, const std::string& what,
                     const std::vector<std::string>& allowed, bool required = false) {
    std::string v = str(map, key, what, required);
    if (!v.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
      fail(map[key], "'" + key + "' of " + what + " must be one of " + join(allowed, ", ") + ", not '" + v + "'");
      return "";
    }
    return v;
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
  std::string header(const YAML::Node& root, std::set<std::string>& sources, std::map<std::string, std::string>& texts) {
    std::string version = str(root, "version", "the file");
    const YAML::Node s = root["sources"];
    if (!s || !s.IsMap() || s.size() == 0) {
      fail(s ? s : root, "'sources' must map each source id to its citation");
    } else {
      for (const auto& kv : s) {
        sources.insert(kv.first.as<std::string>());
        texts[kv.first.as<std::string>()] = kv.second.IsScalar() ? kv.second.as<std::string>() : "";
      }
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
  // Rows that name other rows (GPU -> architecture) are checked once every
  // file is read.
  struct Ref {
    std::string file;
    int line;
    std::string name;
    std::string who;
  };
  std::vector<Ref> architecture_refs;

  void parse_architectures(Reader& r, const YAML::Node& list, const std::set<std::string>& sources) {
    if (!list) return;
    if (!list.IsSequence()) {
      r.fail(list, "'architectures' must be a list of GPU architectures");
      return;
    }
    for (const auto& row : list) {
      if (!r.keys(row, "an architecture",
                  {"name", "bf16", "kernel_modules", "last_driver_branch", "cuda_dropped_in", "source"}))
        continue;
      Architecture a;
      a.name = r.str(row, "name", "an architecture");
      std::string what = "architecture '" + a.name + "'";
      a.bf16 = r.boolean(row, "bf16", what);
      a.kernel_modules = r.one_of(row, "kernel_modules", what, {"both", "open", "proprietary"}, true);
      a.last_driver_branch = r.str(row, "last_driver_branch", what, false);
      a.cuda_dropped_in = r.str(row, "cuda_dropped_in", what, false);
      if (!a.cuda_dropped_in.empty() && !is_version(a.cuda_dropped_in, 2))
        r.fail(row["cuda_dropped_in"], "'cuda_dropped_in' of " + what + " must look like \"13.0\"");
      a.source = r.source(row, what, sources);
      if (a.name.empty()) continue;
      if (cat.architectures_.count(a.name)) {
        r.fail(row, "duplicate " + what);
        continue;
      }
      cat.architecture_order_.push_back(a.name);
      cat.architectures_[a.name] = std::move(a);
    }
  }

  void parse_gpus(Reader& r, const std::string& file, const YAML::Node& root, const std::set<std::string>& sources) {
    parse_architectures(r, root["architectures"], sources);
    const YAML::Node list = root["gpus"];
    if (!list || !list.IsSequence()) {
      r.fail(list ? list : root, "'gpus' must be a list of GPU models");
      return;
    }
    for (const auto& row : list) {
      if (!r.keys(row, "a GPU model",
                  {"name", "product_name", "aliases", "architecture", "compute_capability", "form_factor", "datacenter",
                   "min_cuda", "min_driver", "kernel_modules", "nvswitch_min_gpus", "fabric_manager", "memory_gb", "ecc",
                   "nvlink", "source", "mig", "mig_min_driver"}))
        continue;
      GpuModel g;
      g.name = r.str(row, "name", "a GPU model");
      std::string what = "GPU model '" + g.name + "'";
      g.product_name = r.str(row, "product_name", what);
      g.aliases = r.strings(row, "aliases", what);
      g.architecture = r.str(row, "architecture", what);
      g.compute_capability = r.str(row, "compute_capability", what);
      g.form_factor = r.one_of(row, "form_factor", what, {"sxm", "pcie", "superchip"}, true);
      g.datacenter = r.boolean(row, "datacenter", what);
      g.min_cuda = r.str(row, "min_cuda", what);
      if (!g.min_cuda.empty() && !is_version(g.min_cuda, 2)) r.fail(row["min_cuda"], "'min_cuda' of " + what + " must look like \"11.8\"");
      g.min_driver = r.str(row, "min_driver", what, false);
      if (!g.min_driver.empty() && !is_version(g.min_driver, 0))
        r.fail(row["min_driver"], "'min_driver' of " + what + " must look like \"570.133.20\"");
      g.mig_min_driver = r.str(row, "mig_min_driver", what, false);
      if (!g.mig_min_driver.empty() && !is_version(g.mig_min_driver, 0))
        r.fail(row["mig_min_driver"], "'mig_min_driver' of " + what + " must look like \"550.90.07\"");
      g.kernel_modules = r.one_of(row, "kernel_modules", what, {"both", "open", "proprietary"});
      g.nvswitch_min_gpus = r.integer(row, "nvswitch_min_gpus", what, false);
      g.fabric_manager = r.one_of(row, "fabric_manager", what, {"node", "switch-tray"});
      if ((g.nvswitch_min_gpus > 0) != !g.fabric_manager.empty())
        r.fail(row, what + " must set 'nvswitch_min_gpus' and 'fabric_manager' together (an NVSwitch fabric has a Fabric Manager)");
      g.memory_gb = r.integer(row, "memory_gb", what);
      g.ecc = r.boolean(row, "ecc", what);
      g.nvlink = r.boolean(row, "nvlink", what);
      g.source = r.source(row, what, sources);
      if (const YAML::Node mig = row["mig"]) parse_mig(r, mig, g, what);
      if (g.name.empty()) continue;
      if (!g.architecture.empty()) architecture_refs.push_back({file, row.Mark().line + 1, g.architecture, what});
      if (cat.gpus_.count(g.name) || cat.gpu_aliases_.count(g.name)) {
        r.fail(row, "duplicate GPU model '" + g.name + "'");
        continue;
      }
      for (const auto& a : g.aliases) {
        if (cat.gpus_.count(a) || cat.gpu_aliases_.count(a)) r.fail(row["aliases"], "alias '" + a + "' of " + what + " is already used");
        else cat.gpu_aliases_[a] = g.name;
      }
      if (!g.product_name.empty()) {
        if (cat.gpu_aliases_.count(g.product_name) && cat.gpu_aliases_[g.product_name] != g.name)
          r.fail(row["product_name"], "product name '" + g.product_name + "' of " + what + " is already used by GPU model '" +
                                          cat.gpu_aliases_[g.product_name] + "'");
        else if (!cat.gpus_.count(g.product_name))
          cat.gpu_aliases_[g.product_name] = g.name;
      }
      cat.gpu_order_.push_back(g.name);
      cat.gpus_[g.name] = std::move(g);
    }
  }

  void parse_mig(Reader& r, const YAML::Node& mig, GpuModel& g, const std::string& what) {
    if (!r.keys(mig, "the MIG section of " + what, {"max_instances", "compute_slices", "memory_slices", "balanced", "profiles"}))
      return;
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
    if (const YAML::Node bal = mig["balanced"]) {
      if (!bal.IsMap()) {
        r.fail(bal, "'balanced' of " + w + " must map MIG profiles to counts");
        return;
      }
      for (const auto& kv : bal) {
        std::string name = kv.first.as<std::string>();
        int n = 0;
        try {
          n = kv.second.as<int>();
        } catch (const YAML::Exception&) {
        }
        if (n < 1) r.fail(kv.second, "the count of '" + name + "' in the balanced layout of " + what + " must be a whole number >= 1");
        else g.mig_balanced.emplace_back(name, n);
      }
      MigPlacement fit = place_mig(g, g.mig_balanced);
      if (!fit.fits) r.fail(bal, "the balanced MIG layout of " + what + " does not fit the GPU: " + fit.problem);
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
    if (const YAML::Node mvc = root["minor_version_compat"]) {
      if (!mvc.IsSequence()) r.fail(mvc, "'minor_version_compat' must be a list of {cuda_major, min_driver}");
      else
        for (const auto& row : mvc) {
          if (!r.keys(row, "a minor_version_compat row", {"cuda_major", "min_driver", "source"})) continue;
          int major = r.integer(row, "cuda_major", "a minor_version_compat row");
          std::string what = "minor-version compatibility of CUDA " + std::to_string(major) + ".x";
          std::string driver = r.str(row, "min_driver", what);
          r.source(row, what, sources);
          if (!driver.empty() && !is_version(driver, 0)) r.fail(row["min_driver"], "'min_driver' of " + what + " must look like \"525\" or \"450.80.02\"");
          else if (!driver.empty() && !cat.minor_compat_.emplace(major, driver).second) r.fail(row, "duplicate " + what);
        }
    }
    if (const YAML::Node fwd = root["forward_compat"]) {
      if (!fwd.IsSequence()) r.fail(fwd, "'forward_compat' must be a list of {cuda_major, branch, min_driver}");
      else
        for (const auto& row : fwd) {
          if (!r.keys(row, "a forward_compat row", {"cuda_major", "branch", "min_driver", "source"})) continue;
          ForwardCompat f;
          f.cuda_major = r.integer(row, "cuda_major", "a forward_compat row");
          f.branch = r.str(row, "branch", "a forward_compat row");
          std::string what = "forward compatibility of CUDA " + std::to_string(f.cuda_major) + ".x on R" + f.branch;
          f.min_driver = r.str(row, "min_driver", what);
          r.source(row, what, sources);
          if (!f.min_driver.empty() && f.min_driver.rfind(f.branch + ".", 0) != 0)
            r.fail(row["min_driver"], "'min_driver' of " + what + " must be a release of branch " + f.branch);
          else if (!f.branch.empty() && !f.min_driver.empty())
            cat.forward_.push_back(std::move(f));
        }
    }
  }

  void parse_software(Reader& r, const YAML::Node& root, const std::set<std::string>& sources) {
    const YAML::Node branches = root["driver_branches"];
    if (!branches || !branches.IsSequence()) {
      r.fail(branches ? branches : root, "'driver_branches' must list NVIDIA's data-center driver branches");
    } else {
      for (const auto& row : branches) {
        if (!r.keys(row, "a driver_branches row", {"branch", "kind", "end_of_life", "first", "latest", "source"})) continue;
        DriverBranch b;
        b.branch = r.str(row, "branch", "a driver_branches row");
        const std::string what = "driver branch R" + b.branch;
        b.kind = r.one_of(row, "kind", what, {"ltsb", "production", "new-feature"});
        if (!row["kind"]) r.fail(row, what + " has no 'kind'");
        b.end_of_life = r.str(row, "end_of_life", what, false);
        b.first = r.str(row, "first", what, false);  // none for a branch announced without releases
        b.latest = r.str(row, "latest", what, false);
        r.source(row, what, sources);
        const bool month = b.end_of_life.size() == 7 && b.end_of_life[4] == '-' &&
                           std::all_of(b.end_of_life.begin(), b.end_of_life.end(),
                                       [](char c) { return c == '-' || std::isdigit(static_cast<unsigned char>(c)); });
        if (!is_version(b.branch, 1)) r.fail(row["branch"], what + ": 'branch' must be a number like \"580\"");
        else if (!b.end_of_life.empty() && !month) r.fail(row["end_of_life"], what + ": 'end_of_life' must look like \"2028-06\"");
        else if (b.first.empty() != b.latest.empty()) r.fail(row, what + ": set 'first' and 'latest' together");
        else if (!b.first.empty() && (!is_version(b.first, 3) || b.first.rfind(b.branch + ".", 0) != 0 ||
                                      !is_version(b.latest, 3) || b.latest.rfind(b.branch + ".", 0) != 0))
          r.fail(row, what + ": 'first' and 'latest' must be releases of the branch like \"" + b.branch + ".65.06\"");
        else if (!b.first.empty() && compare_versions(b.first, b.latest) > 0)
          r.fail(row, what + ": 'first' is newer than 'latest'");
        else if (!cat.branches_.empty() && compare_versions(cat.branches_.back().branch, b.branch) >= 0)
          r.fail(row, what + ": list the branches oldest first, each once");
        else
          cat.branches_.push_back(std::move(b));
      }
    }
    const YAML::Node fm = root["fabric_manager"];
    if (!fm || !fm.IsSequence()) {
      r.fail(fm ? fm : root, "'fabric_manager' must list the driver releases with a Fabric Manager of the same version");
    } else {
      for (const auto& row : fm) {
        if (!r.keys(row, "a fabric_manager row", {"driver", "source"})) continue;
        std::string driver = r.str(row, "driver", "a fabric_manager row");
        r.source(row, "Fabric Manager " + driver, sources);
        if (driver.empty()) continue;
        if (!is_version(driver, 0)) r.fail(row["driver"], "driver version '" + driver + "' must look like \"550.54.15\"");
        else if (!cat.fm_drivers_.insert(driver).second) r.fail(row, "duplicate Fabric Manager " + driver);
      }
    }
    const YAML::Node ct = root["container_toolkit"];
    if (!ct || !r.keys(ct, "container_toolkit", {"default", "source", "advisories"})) {
      if (!ct) r.fail(root, "the file has no 'container_toolkit'");
    } else {
      cat.toolkit_default_ = r.str(ct, "default", "container_toolkit");
      r.source(ct, "container_toolkit", sources);
      const YAML::Node adv = ct["advisories"];
      if (adv && !adv.IsSequence()) r.fail(adv, "'advisories' of container_toolkit must be a list");
      else if (adv)
        for (const auto& row : adv) {
          if (!r.keys(row, "an advisory", {"id", "fixed_in", "summary", "source"})) continue;
          Advisory a;
          a.id = r.str(row, "id", "an advisory");
          std::string what = "advisory " + a.id;
          a.fixed_in = r.str(row, "fixed_in", what);
          a.summary = r.str(row, "summary", what);
          r.source(row, what, sources);
          if (!a.fixed_in.empty() && !is_version(a.fixed_in, 0)) r.fail(row["fixed_in"], "'fixed_in' of " + what + " must look like \"1.17.8\"");
          else cat.advisories_.push_back(std::move(a));
        }
      for (const auto& a : cat.advisories_)
        if (!cat.toolkit_default_.empty() && compare_versions(cat.toolkit_default_, a.fixed_in) < 0)
          r.fail(ct["default"], "the default container toolkit " + cat.toolkit_default_ + " is affected by " + a.id +
                                    " (fixed in " + a.fixed_in + "); default to a fixed release");
    }
    // A release the render installs: {version: "X.Y.Z", source: ID}.
    auto release = [&](const char* key, const char* what, const char* example, std::string& out) {
      const YAML::Node n = root[key];
      if (!n || !r.keys(n, key, {"version", "source"})) {
        if (!n) r.fail(root, std::string("the file has no '") + key + "'");
        return;
      }
      out = r.str(n, "version", key);
      r.source(n, key, sources);
      if (!out.empty() && !is_version(out, 0))
        r.fail(n["version"], std::string("the ") + what + " version must look like \"" + example + "\"");
    };
    release("doca", "DOCA", "2.9.2", cat.doca_version_);
    release("efa_installer", "EFA installer", "1.47.0", cat.efa_installer_version_);
    const YAML::Node images = root["cloud_images"];
    if (!images || !images.IsSequence()) {
      r.fail(images ? images : root, images ? "'cloud_images' must be a list" : "the file has no 'cloud_images'");
    } else {
      for (const auto& row : images) {
        if (!r.keys(row, "a cloud image", {"provider", "match", "os", "cloud_init", "nvidia_driver", "source"})) continue;
        CloudImage ci;
        ci.provider = r.str(row, "provider", "a cloud image");
        ci.match = r.str(row, "match", "a cloud image");
        const std::string what = "cloud image '" + ci.match + "'";
        ci.os = r.str(row, "os", what);
        for (const char* key : {"cloud_init", "nvidia_driver"}) {
          const YAML::Node b = row[key];
          if (!b || !b.IsScalar() || (b.Scalar() != "true" && b.Scalar() != "false")) {
            r.fail(b ? b : row, "'" + std::string(key) + "' of " + what + " must be true or false");
            continue;
          }
          (std::string(key) == "cloud_init" ? ci.cloud_init : ci.nvidia_driver) = b.Scalar() == "true";
        }
        r.source(row, what, sources);
        if (ci.match != ascii_lower(ci.match)) r.fail(row["match"], "'match' of " + what + " must be lower case");
        cat.cloud_images_.push_back(std::move(ci));
      }
    }
    const YAML::Node dcgm = root["dcgm_exporter"];
    if (!dcgm || !r.keys(dcgm, "dcgm_exporter", {"image", "source"})) {
      if (!dcgm) r.fail(root, "the file has no 'dcgm_exporter'");
    } else {
      cat.dcgm_image_ = r.str(dcgm, "image", "dcgm_exporter");
      r.source(dcgm, "dcgm_exporter", sources);
      size_t at = cat.dcgm_image_.rfind("@sha256:");
      if (!cat.dcgm_image_.empty() && (at == std::string::npos || cat.dcgm_image_.size() - at - 8 != 64))
        r.fail(dcgm["image"], "the DCGM exporter image must be pinned by digest (name@sha256:<64 hex digits>)");
    }
  }
};

const CloudImage* Catalog::cloud_image(const std::string& provider, const std::string& image) const {
  const std::string lower = ascii_lower(image);
  for (const auto& ci : cloud_images_)
    if (ci.provider == provider && lower.find(ci.match) != std::string::npos) return &ci;
  return nullptr;
}

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
          std::vector<std::string> keys = {"version", "sources"};
          if (base == "gpus.yaml") keys.insert(keys.end(), {"architectures", "gpus"});
          else if (base == "cuda.yaml") keys.insert(keys.end(), {"toolkits", "minor_version_compat", "forward_compat"});
          else if (base == "software.yaml")
            keys.insert(keys.end(), {"driver_branches", "fabric_manager", "container_toolkit", "dcgm_exporter", "doca", "efa_installer", "cloud_images"});
          r.keys(root, "the file", keys);
          std::set<std::string> sources;
          std::string version = r.header(root, sources, cat.sources_[base]);
          if (!version.empty() && (cat.version_.empty() || compare_versions(version, cat.version_) > 0)) cat.version_ = version;
          if (base == "gpus.yaml") parser.parse_gpus(r, name, root, sources);
          else if (base == "cuda.yaml") parser.parse_cuda(r, root, sources);
          else parser.parse_software(r, root, sources);
        }
      } catch (const YAML::ParserException& e) {
        parser.errors.push_back(name + ":" + std::to_string(e.mark.line + 1) + ": YAML syntax error: " + e.msg);
      } catch (const YAML::Exception& e) {
        parser.errors.push_back(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg +
                                " (a value has the wrong shape: keys and scalars must be text)");
      }
    }
    parser.errors.insert(parser.errors.end(), r.errors().begin(), r.errors().end());
  }
  for (const auto& f : kFiles)
    if (!seen.count(f)) parser.errors.push_back(f + ": missing; the catalog needs " + join(kFiles, ", "));
  for (const auto& ref : parser.architecture_refs) {
    if (cat.architecture(ref.name)) continue;
    parser.errors.push_back(ref.file + ":" + std::to_string(ref.line) + ": " + ref.who + " names architecture '" + ref.name +
                            "', which gpus.yaml's 'architectures' does not list");
  }
  if (!parser.errors.empty()) return Error::invalid("invalid catalog data:\n  " + join(parser.errors, "\n  "));
  return cat;
}

const std::vector<std::string>& Catalog::file_names() { return kFiles; }

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

std::optional<std::string> Catalog::resolve_cuda(const std::string& cuda) const {
  if (cuda_min_driver_.count(cuda)) return cuda;
  auto ga = cuda_ga_.find(cuda);
  if (ga != cuda_ga_.end()) return ga->second;
  return std::nullopt;
}

std::optional<std::string> Catalog::installed_cuda(const std::string& cuda) const {
  auto full = resolve_cuda(cuda);
  if (!full) return std::nullopt;
  const std::string minor = full->substr(0, full->rfind('.'));
  std::string best = *full;
  for (const auto& [v, d] : cuda_min_driver_)
    if (v.rfind(minor + ".", 0) == 0 && compare_versions(v, best) > 0) best = v;
  return best;
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

std::vector<std::string> Catalog::cuda_versions() const {
  std::vector<std::string> out;
  for (const auto& [v, d] : cuda_min_driver_) out.push_back(v);
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return compare_versions(a, b) < 0; });
  return out;
}

const Architecture* Catalog::architecture(const std::string& name) const {
  auto it = architectures_.find(name);
  return it == architectures_.end() ? nullptr : &it->second;
}

std::optional<std::string> Catalog::minor_compat_min_driver(int major) const {
  auto it = minor_compat_.find(major);
  if (it == minor_compat_.end()) return std::nullopt;
  return it->second;
}

const ForwardCompat* Catalog::forward_compat(int major, const std::string& driver) const {
  for (const auto& f : forward_)
    if (f.cuda_major == major && driver.rfind(f.branch + ".", 0) == 0 && compare_versions(driver, f.min_driver) >= 0)
      return &f;
  return nullptr;
}

const DriverBranch* Catalog::driver_branch(const std::string& branch) const {
  for (const auto& b : branches_)
    if (b.branch == branch) return &b;
  return nullptr;
}

FabricManager Catalog::fabric_manager_for(const std::string& driver) const {
  if (fm_drivers_.count(driver)) return FabricManager::Published;
  const DriverBranch* b = driver_branch(driver.substr(0, driver.find('.')));
  if (b && !b->latest.empty() && is_version(driver, 3) && compare_versions(driver, b->latest) > 0)
    return FabricManager::Presumed;
  return FabricManager::None;
}

std::vector<std::string> Catalog::fabric_manager_drivers() const {
  std::vector<std::string> out(fm_drivers_.begin(), fm_drivers_.end());
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return compare_versions(a, b) < 0; });
  return out;
}

std::vector<Advisory> Catalog::container_toolkit_advisories(const std::string& version) const {
  std::vector<Advisory> out;
  for (const auto& a : advisories_)
    if (compare_versions(version, a.fixed_in) < 0) out.push_back(a);
  return out;
}

std::string Catalog::kernel_modules(const GpuModel& gpu) const {
  if (!gpu.kernel_modules.empty()) return gpu.kernel_modules;
  const Architecture* a = architecture(gpu.architecture);
  return a ? a->kernel_modules : "both";
}

std::vector<const GpuModel*> Catalog::gpu_models() const {
  std::vector<const GpuModel*> out;
  for (const auto& n : gpu_order_) out.push_back(&gpus_.at(n));
  return out;
}

std::vector<const Architecture*> Catalog::architectures() const {
  std::vector<const Architecture*> out;
  for (const auto& n : architecture_order_) out.push_back(&architectures_.at(n));
  return out;
}

nlohmann::json Catalog::to_json() const {
  nlohmann::json gpus = nlohmann::json::object();
  for (const auto& [name, g] : gpus_) {
    nlohmann::json j = {{"name", g.name},
                        {"product_name", g.product_name},
                        {"architecture", g.architecture},
                        {"memory_gb", g.memory_gb},
                        {"ecc", g.ecc},
                        {"nvlink", g.nvlink},
                        {"datacenter", g.datacenter},
                        {"mig", g.has_mig()}};
    gpus[name] = j;
    for (const auto& a : g.aliases) gpus[a] = j;
    if (!g.product_name.empty()) gpus[g.product_name] = j;
  }
  return {{"version", version_}, {"gpus", std::move(gpus)}};
}

namespace {

// Depth-first search over the instances, largest first (fewest start choices).
bool place(const GpuModel& gpu, const std::vector<const MigProfile*>& todo, size_t i, std::vector<bool>& memory,
           int compute_used, std::vector<std::pair<std::string, int>>& slots) {
  if (i == todo.size()) return true;
  const MigProfile& p = *todo[i];
  const int width = std::max(p.memory_slices, 1);
  for (int start = 0; start + width <= gpu.mig_memory_slices; start += width) {
    if (start + p.compute_slices > gpu.mig_compute_slices) break;
    bool free = true;
    for (int k = start; k < start + width; ++k) free = free && !memory[static_cast<size_t>(k)];
    if (!free || compute_used + p.compute_slices > gpu.mig_compute_slices) continue;
    // Identical profiles fill slots left to right: skip placements that only permute them.
    if (i > 0 && todo[i - 1] == todo[i] && !slots.empty() && start < slots.back().second) continue;
    for (int k = start; k < start + width; ++k) memory[static_cast<size_t>(k)] = true;
    slots.emplace_back(p.name, start);
    if (place(gpu, todo, i + 1, memory, compute_used + p.compute_slices, slots)) return true;
    slots.pop_back();
    for (int k = start; k < start + width; ++k) memory[static_cast<size_t>(k)] = false;
  }
  return false;
}

}  // namespace

MigPlacement place_mig(const GpuModel& gpu, const std::vector<std::pair<std::string, int>>& layout) {
  MigPlacement out;
  if (!gpu.has_mig()) {
    out.problem = gpu.name + " does not support MIG";
    return out;
  }
  std::vector<const MigProfile*> todo;
  int total = 0;
  int media = 0;
  for (const auto& [name, count] : layout) {
    const MigProfile* p = gpu.mig_profile(name);
    if (!p) {
      out.problem = "'" + name + "' is not a MIG profile of " + gpu.name;
      return out;
    }
    if (count < 1) {
      out.problem = "the count of " + name + " must be at least 1";
      return out;
    }
    if (count > p->max_count) {
      out.problem = std::to_string(count) + " x " + name + " exceeds the " + std::to_string(p->max_count) + " instance(s) of " +
                    name + " that " + gpu.name + " allows";
      return out;
    }
    total += count;
    if (name.find("+me") != std::string::npos) media += count;
    for (int k = 0; k < count; ++k) todo.push_back(p);
  }
  if (total > gpu.mig_max_instances) {
    out.problem = std::to_string(total) + " instances exceed the " + std::to_string(gpu.mig_max_instances) + " that " +
                  gpu.name + " allows";
    return out;
  }
  if (media > 1) {
    out.problem = "a GPU has one set of media engines: at most one '+me' instance";
    return out;
  }
  int compute = 0, memory_slices = 0;
  for (const auto* p : todo) {
    compute += p->compute_slices;
    memory_slices += p->memory_slices;
  }
  if (compute > gpu.mig_compute_slices) {
    out.problem = "needs " + std::to_string(compute) + " compute slices; " + gpu.name + " has " +
                  std::to_string(gpu.mig_compute_slices);
    return out;
  }
  if (memory_slices > gpu.mig_memory_slices) {
    out.problem = "needs " + std::to_string(memory_slices) + " memory slices; " + gpu.name + " has " +
                  std::to_string(gpu.mig_memory_slices);
    return out;
  }
  std::stable_sort(todo.begin(), todo.end(), [](const MigProfile* a, const MigProfile* b) {
    return std::tie(a->memory_slices, a->compute_slices) > std::tie(b->memory_slices, b->compute_slices);
  });
  std::vector<bool> used(static_cast<size_t>(gpu.mig_memory_slices), false);
  if (!place(gpu, todo, 0, used, 0, out.slots)) {
    out.slots.clear();
    out.problem = "no placement puts these instances on " + gpu.name +
                  "'s memory slices without overlap (an instance of M memory slices starts at a multiple of M)";
    return out;
  }
  out.fits = true;
  return out;
}

std::string effective_kernel_modules(const Catalog& catalog, const GpuModel* gpu, const std::string& chosen,
                                     const std::string& driver) {
  if (!chosen.empty()) return chosen;
  const std::string flavours = gpu ? catalog.kernel_modules(*gpu) : "both";
  if (flavours != "both") return flavours;
  const std::string branch = driver.substr(0, driver.find('.'));
  return compare_versions(branch, "560") >= 0 ? "open" : "proprietary";
}

Result<const Catalog*> default_catalog() {
  static const Result<Catalog> loaded = [] {
    if (const char* dir = std::getenv("PLINTH_CATALOG_DIR"); dir && *dir) return Catalog::load_dir(dir);
    return Catalog::load_embedded();
  }();
  if (!loaded) return loaded.error();
  return &*loaded;
}

}  // namespace plinth::catalog
