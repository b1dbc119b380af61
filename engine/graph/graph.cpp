// Graph queries over expanded resources: topological order and Graphviz DOT.
#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <unordered_map>

#include "engine/graph/expand.h"

namespace plinth::graph {

std::vector<std::string> ResourceGraph::topological_order() const {
  const size_t n = resources.size();
  std::unordered_map<std::string_view, size_t> index;
  index.reserve(n);
  for (size_t i = 0; i < n; ++i) index.emplace(resources[i].address, i);

  // dependents[d] lists the resources waiting for d; pending[i] counts what i waits for.
  std::vector<std::vector<size_t>> dependents(n);
  std::vector<size_t> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& dep : resources[i].depends_on) {
      auto it = index.find(dep);
      if (it == index.end() || it->second == i) continue;
      dependents[it->second].push_back(i);
      ++pending[i];
    }
  }
  // Resources are sorted by address, so the smallest ready index is the next in address order.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);

  std::vector<std::string> order;
  order.reserve(n);
  std::vector<bool> done(n, false);
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    done[i] = true;
    order.push_back(resources[i].address);
    for (size_t d : dependents[i])
      if (--pending[d] == 0) ready.push(d);
  }
  for (size_t i = 0; i < n; ++i)
    if (!done[i]) order.push_back(resources[i].address);
  return order;
}

namespace {

void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

/// The DOT node a resource is drawn as: itself, or its pool when collapsing.
std::string pool_id(const Resource& r) { return r.type + "." + r.name + "[*]"; }

}  // namespace

std::string to_dot(const ResourceGraph& graph, bool collapse_pools) {
  std::string out = "digraph plinth {\n  rankdir = \"LR\";\n  node [shape = \"box\"];\n";
  out.reserve(graph.resources.size() * 96);

  // Nodes, in address order. A collapsed pool is drawn once, at its first member.
  std::unordered_map<std::string_view, std::string> collapsed;  // member address -> pool id
  for (size_t i = 0; i < graph.resources.size(); ++i) {
    const Resource& r = graph.resources[i];
    if (!collapse_pools || r.index < 0) {
      out += "  ";
      append_quoted(out, r.address);
      out += ";\n";
      continue;
    }
    size_t end = i;
    int first = r.index, last = r.index;
    while (end + 1 < graph.resources.size() && graph.resources[end + 1].type == r.type &&
           graph.resources[end + 1].name == r.name && graph.resources[end + 1].index >= 0) {
      ++end;
      last = graph.resources[end].index;
    }
    std::string id = pool_id(r);
    for (size_t j = i; j <= end; ++j) collapsed.emplace(graph.resources[j].address, id);
    out += "  ";
    append_quoted(out, id);
    out += " [label = ";
    append_quoted(out, r.type + "." + r.name + "[" + std::to_string(first) + ".." + std::to_string(last) + "] (" +
                           std::to_string(end - i + 1) + ")");
    out += "];\n";
    i = end;
  }

  // Edges from each resource (or collapsed pool) to each of its dependencies,
  // sorted, each drawn once. A pool's members are adjacent, so one set suffices.
  auto id_of = [&](const std::string& address) -> std::string {
    auto it = collapsed.find(address);
    return it == collapsed.end() ? address : it->second;
  };
  std::string from;
  std::set<std::string> to;
  auto flush = [&] {
    for (const auto& t : to) {
      out += "  ";
      append_quoted(out, from);
      out += " -> ";
      append_quoted(out, t);
      out += ";\n";
    }
    to.clear();
  };
  for (const Resource& r : graph.resources) {
    std::string id = id_of(r.address);
    if (id != from) {
      flush();
      from = std::move(id);
    }
    for (const auto& dep : r.depends_on) to.insert(id_of(dep));
  }
  flush();
  out += "}\n";
  return out;
}

}  // namespace plinth::graph
