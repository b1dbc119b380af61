#!/usr/bin/env bash
# Benchmarks validate and plan on generated blueprints of growing size and
# prints a Markdown table (wall time and peak RSS from /usr/bin/time -v). Plans
# run with --refresh=false: the generated BMCs do not exist, and reading them
# (inventory, drift) measures the network, not Plinth.
#   bash bench/run.sh [BUILD_DIR]        # default: build-bench (Release)
# The results in docs/benchmarks.md were produced by this script.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
if [ ! -x "$build/engine/plinth" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPLINTH_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" --target plinth -j2 >/dev/null
plinth=$PWD/$build/engine/plinth
out=bench/out
mkdir -p "$out"

measure() {  # measure LABEL CMD...  -> "| label | seconds | MiB |"
  local label=$1
  shift
  /usr/bin/time -v -o "$out/time.txt" "$@" >/dev/null 2>"$out/stderr.txt" || {
    rc=$?
    # plan exits 2 when there are changes; anything else is a failure.
    if [ "$rc" -ne 2 ]; then
      cat "$out/stderr.txt" >&2
      echo "benchmark command failed ($rc): $*" >&2
      exit 1
    fi
  }
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$out/time.txt")
  # Elapsed is m:ss.cc; convert to seconds.
  secs=$(echo "$wall" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
  printf "| %s | %s | %s |\n" "$label" "$secs" "$rss"
}

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -m), $(date -u +%Y-%m-%d)"
echo
echo "| command | wall s | peak RSS MiB |"
echo "|---|---|---|"
for spec in "50 20 1000" "500 20 10000" "1000 50 50000" "2000 50 100000"; do
  set -- $spec
  pools=$1 per=$2 nodes=$3
  bp="$out/bp-$nodes.yaml"
  [ -f "$bp" ] || python3 bench/gen_blueprint.py --pools "$pools" --nodes-per-pool "$per" >"$bp"
  rm -f "$out/plinth.state.json"
  measure "validate $nodes nodes ($pools pools)" "$plinth" validate "$bp"
  measure "plan $nodes nodes ($pools pools), empty state" "$plinth" plan "$bp" --state "$out/state-$nodes.json" --refresh=false --detailed-exitcode
  measure "plan $nodes nodes, --json" "$plinth" plan "$bp" --state "$out/state-$nodes.json" --refresh=false --json
done
