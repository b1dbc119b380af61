// plinth graph PATH...: the resource dependency graph in Graphviz DOT.
#include "engine/cli/common.h"
#include "engine/graph/expand.h"

namespace plinth::cli {
namespace {

int run_graph(const Args& args, Io& io) {
  auto loaded = load_blueprint(args.positional, io);
  if (!loaded) return kExitFailure;
  auto g = graph::expand(loaded->blueprint);
  if (!g) return fail(io, "graph", g.error().message);
  std::string dot = graph::to_dot(*g, args.flag("collapse"));
  std::fwrite(dot.data(), 1, dot.size(), io.out);
  return kExitSuccess;
}

const Register graph_command({
    "graph",
    "plinth graph PATH... [--collapse]",
    "Print the resource dependency graph in Graphviz DOT.",
    "One node per resource (addresses as in `plinth plan`) and an edge from each resource\n"
    "to each resource it depends on (node -> its stack, VLANs, tiers and fabric; backup ->\n"
    "its tiers; role -> its namespaces). The output is deterministic. Render it with\n"
    "`plinth graph bp.yaml | dot -Tsvg > graph.svg`.",
    {
        {"collapse", "", "Draw each counted pool POOL[0..n] as one node labelled with its count."},
    },
    run_graph,
    50,
});

}  // namespace
}  // namespace plinth::cli
