#include "providers/common/instance_types.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "engine/core/strings.h"

namespace plinth::cloud {

namespace {

struct Reader {
  const std::string& file;
  std::vector<std::string> errors;

  void fail(const YAML::Node& at, const std::string& message) {
    const YAML::Mark m = at.Mark();
    errors.push_back(file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": " + message);
  }
  template <class T>
  bool get(const YAML::Node& row, const char* key, T& out, const std::string& what, bool required) {
    const YAML::Node v = row[key];
    if (!v) {
      if (required) fail(row, what + " has no '" + key + "'");
      return false;
    }
    try {
      out = v.as<T>();
      return true;
    } catch (const YAML::Exception&) {
      fail(v, "'" + std::string(key) + "' of " + what + " has the wrong type");
      return false;
    }
  }
};

// A function, not a global: schemas are built during static initialisation
// (a test program registers the built-in providers from one).
const std::vector<std::string>& row_keys() {
  static const std::vector<std::string> keys = {"name",        "gpu",      "gpu_count", "vcpus", "memory_gb", "nvswitch",
                                                "fabric_manager", "gpu_network", "gpu_nics", "facts", "source"};
  return keys;
}

}  // namespace

Result<std::vector<InstanceType>> read_instance_types(const std::string& file, std::string_view text) {
  Reader r{file, {}};
  std::vector<InstanceType> out;
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) return Error::invalid(file + ": must be a mapping with 'sources' and 'instance_types'");
    std::map<std::string, std::string> sources;
    for (const auto& kv : root) {
      const auto key = kv.first.as<std::string>();
      if (key != "sources" && key != "instance_types") r.fail(kv.first, "unknown key '" + key + "'");
    }
    if (const YAML::Node s = root["sources"]; s && s.IsMap()) {
      for (const auto& kv : s) sources[kv.first.as<std::string>()] = kv.second.as<std::string>();
    } else {
      r.fail(s ? s : root, "'sources' must map each source's key to its citation");
    }
    const YAML::Node rows = root["instance_types"];
    if (!rows || !rows.IsSequence()) {
      r.fail(rows ? rows : root, "'instance_types' must be a list");
    } else {
      std::set<std::string> names;
      for (const auto& row : rows) {
        if (!row.IsMap()) {
          r.fail(row, "an instance type must be a mapping");
          continue;
        }
        for (const auto& kv : row)
          if (const auto key = kv.first.as<std::string>();
              std::find(row_keys().begin(), row_keys().end(), key) == row_keys().end()) {
            const std::string hint = did_you_mean(key, row_keys());
            r.fail(kv.first, "unknown key '" + key + "'" + (hint.empty() ? " (known: " + join(row_keys(), ", ") + ")" : "; " + hint));
          }
        InstanceType t;
        r.get(row, "name", t.name, "an instance type", true);
        const std::string what = "instance type '" + t.name + "'";
        r.get(row, "gpu", t.gpu, what, true);
        r.get(row, "gpu_count", t.gpu_count, what, true);
        r.get(row, "vcpus", t.vcpus, what, true);
        r.get(row, "memory_gb", t.memory_gb, what, true);
        r.get(row, "nvswitch", t.nvswitch, what, false);
        r.get(row, "fabric_manager", t.fabric_manager, what, false);
        r.get(row, "gpu_network", t.gpu_network, what, false);
        r.get(row, "gpu_nics", t.gpu_nics, what, false);
        if (const YAML::Node f = row["facts"]) {
          if (!f.IsMap()) r.fail(f, "'facts' of " + what + " must be a mapping of integers");
          else
            for (const auto& kv : f) {
              int v = 0;
              try {
                v = kv.second.as<int>();
              } catch (const YAML::Exception&) {
                r.fail(kv.second, "fact '" + kv.first.as<std::string>() + "' of " + what + " must be an integer");
                continue;
              }
              t.facts[kv.first.as<std::string>()] = v;
            }
        }
        std::string source;
        if (r.get(row, "source", source, what, true))
          for (size_t at = 0; at <= source.size();) {
            size_t end = source.find(';', at);
            if (end == std::string::npos) end = source.size();
            std::string key = source.substr(at, end - at);
            at = end + 1;
            key.erase(0, key.find_first_not_of(' '));
            key = key.substr(0, key.find(' '));
            auto it = sources.find(key);
            if (it == sources.end()) r.fail(row["source"], what + " cites '" + key + "', which 'sources' does not list");
            else t.sources.push_back(it->second);
          }
        if (t.gpu_count < 1 && row["gpu_count"]) r.fail(row["gpu_count"], "'gpu_count' of " + what + " must be at least 1");
        if (t.fabric_manager && !t.nvswitch) r.fail(row, what + " runs Fabric Manager but has no NVSwitch");
        if (!t.name.empty() && !names.insert(t.name).second) r.fail(row, "duplicate " + what);
        out.push_back(std::move(t));
      }
    }
  } catch (const YAML::ParserException& e) {
    return Error::invalid(file + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                          ": YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    return Error::invalid(file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (!r.errors.empty()) return Error::invalid(join(r.errors, "\n"));
  return out;
}

std::vector<InstanceType> compiled_instance_types(const std::string& file, std::string_view text) {
  auto types = read_instance_types(file, text);
  if (!types) {
    std::fprintf(stderr, "plinth: internal error: %s\n", types.error().message.c_str());
    std::abort();
  }
  return std::move(*types);
}

}  // namespace plinth::cloud
