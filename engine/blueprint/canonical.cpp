#include "engine/blueprint/canonical.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace plinth::bp {
namespace {

const std::vector<std::string> kOrder = {"apiVersion", "kind",       "metadata",    "stacks", "networks",   "storage",
                                         "node_pools", "burst_pools", "access",      "monitoring", "clusters", "providers",
                                         "outputs"};

/// The YAML data of a document tree, comparable: maps as objects (key order
/// aside), sequences as arrays, scalars as their text with their tag.
nlohmann::json data(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& kv : n) o[kv.first.Scalar()] = data(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& v : n) a.push_back(data(v));
      return a;
    }
    case YAML::NodeType::Scalar: return nlohmann::json::array({n.Tag(), n.Scalar()});
    default: return nullptr;
  }
}

Result<nlohmann::json> all_data(const std::string& text, const std::string& name) {
  try {
    nlohmann::json docs = nlohmann::json::array();
    for (const auto& d : YAML::LoadAll(text)) docs.push_back(data(d));
    return docs;
  } catch (const YAML::Exception& e) {
    return Error::invalid(name + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                          ": not valid YAML (" + e.msg + "); plinth validate says more");
  }
}

bool top_key(const std::string& line, std::string* key) {
  if (line.empty() || !(std::isalpha(static_cast<unsigned char>(line[0])) || line[0] == '_')) return false;
  size_t i = 0;
  while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' || line[i] == '-')) ++i;
  if (i >= line.size() || line[i] != ':') return false;
  if (i + 1 < line.size() && line[i + 1] != ' ') return false;
  *key = line.substr(0, i);
  return true;
}

struct Block {
  std::string key;
  std::vector<std::string> lines;  // its leading comments, the key line, its content
};

}  // namespace

Result<std::string> canonical_text(const std::string& text, const std::string& name) {
  // Lines, without \r and trailing blanks; tabs in indentation are refused.
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? text.size() : nl + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    const size_t indent = line.find_first_not_of(' ');
    if (indent != std::string::npos && line[indent] == '\t')
      return Error::invalid(name + ":" + std::to_string(lines.size() + 1) + ":" + std::to_string(indent + 1) +
                            ": a tab in indentation (YAML allows spaces only); indent with spaces");
    lines.push_back(std::move(line));
  }
  auto before = all_data(text, name);
  if (!before) return before.error();

  // Blank-line runs collapse to one; none at the start or the end.
  std::vector<std::string> kept;
  for (auto& l : lines) {
    if (l.empty() && (kept.empty() || kept.back().empty())) continue;
    kept.push_back(std::move(l));
  }
  while (!kept.empty() && kept.back().empty()) kept.pop_back();

  // Top-level sections, reordered when the file is one block mapping.
  const bool one_document =
      std::none_of(kept.begin(), kept.end(), [](const std::string& l) { return l.rfind("---", 0) == 0 || l == "..."; });
  std::vector<std::string> out_lines = kept;
  if (one_document) {
    std::vector<std::string> head;  // comments before the first key
    std::vector<Block> blocks;
    std::vector<std::string> pending;  // col-0 comments and blank lines not yet placed
    bool block_mapping = true;
    for (const auto& l : kept) {
      std::string key;
      if (top_key(l, &key)) {
        // Comments right above a key belong to it; a blank line before them ends the previous section.
        Block b;
        b.key = key;
        size_t split = pending.size();
        while (split > 0 && !pending[split - 1].empty()) --split;
        std::vector<std::string>& tail = blocks.empty() ? head : blocks.back().lines;
        tail.insert(tail.end(), pending.begin(), pending.begin() + static_cast<long>(split));
        b.lines.assign(pending.begin() + static_cast<long>(split), pending.end());
        b.lines.push_back(l);
        pending.clear();
        blocks.push_back(std::move(b));
      } else if (l.empty() || l[0] == '#') {
        pending.push_back(l);
      } else if (l[0] != ' ' && l[0] != '-') {
        block_mapping = false;  // a flow mapping, a scalar document, ...
        break;
      } else {
        if (blocks.empty()) {
          block_mapping = false;
          break;
        }
        auto& b = blocks.back().lines;
        b.insert(b.end(), pending.begin(), pending.end());
        pending.clear();
        b.push_back(l);
      }
    }
    if (block_mapping && !blocks.empty()) {
      auto rank = [](const std::string& key) {
        auto it = std::find(kOrder.begin(), kOrder.end(), key);
        return static_cast<size_t>(it - kOrder.begin());
      };
      std::stable_sort(blocks.begin(), blocks.end(),
                       [&](const Block& a, const Block& b) { return rank(a.key) < rank(b.key); });
      out_lines = head;
      for (auto& b : blocks) {
        while (!b.lines.empty() && b.lines.back().empty()) b.lines.pop_back();
        // A section that started after a blank line keeps one before it wherever it goes.
        const bool spaced = !b.lines.empty() && b.lines.front().empty();
        if (spaced) b.lines.erase(b.lines.begin());
        if (!out_lines.empty() && (spaced || rank(b.key) > 2) && !out_lines.back().empty())
          out_lines.push_back("");
        out_lines.insert(out_lines.end(), b.lines.begin(), b.lines.end());
      }
      out_lines.insert(out_lines.end(), pending.begin(), pending.end());  // comments after the last section
      while (!out_lines.empty() && out_lines.back().empty()) out_lines.pop_back();
    }
  }
  std::string out;
  for (const auto& l : out_lines) out += l + "\n";

  auto after = all_data(out, name);
  if (!after || *after != *before)
    return Error::fatal(name + ": formatting would change the blueprint's data; this is a bug in plinth fmt, the "
                               "file was left as it was (please report it with the file)");
  return out;
}

}  // namespace plinth::bp
