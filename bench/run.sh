#!/usr/bin/env bash
# The benchmarks of docs/benchmarks.md: builds plinth, redfish-emulator and the
# cloud emulators (aws-ec2-emulator, gcp-emulator, azure-emulator; Release
# unless BUILD_DIR is given), installs the peers it compares with
# (Debian's ansible; terraform is used when installed, skipped otherwise) and
# runs bench/bench.py, which writes the generated tables into
# docs/benchmarks.md (between the <!-- bench:NAME --> markers). Not part of
# CI's test command: it takes ~30 minutes.
#   bash bench/run.sh [BUILD_DIR]       # default: build-bench (Release)
# Environment: RUNS (5, plan/policy/terraform), APPLY_RUNS (5), ANSIBLE_RUNS
# (5; one run is ~3 minutes at 50 ms latency), TERRAFORM_RUNS (5),
# MAX_NODES (100000), APPLY_MAX (10000: the largest bare-metal apply), CLOUD_NODES (100,1000: the instances
# of each cloud apply), ONLY (plan,terraform,policy,apply,cloud),
# PLINTH_BENCH_POSTGRES_URL (the plan and apply sections' PostgreSQL server; default:
# the one .ci/postgres starts).
# Plans run with --refresh=false: the generated BMCs do not exist, and reading
# them measures the network, not Plinth (the apply benchmark reads real ones
# from the emulator). The cloud section applies one burst pool per cloud
# provider against its emulator, each run against a fresh emulator and state.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}

sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
need_deb() {  # need_deb COMMAND PACKAGE
  command -v "$1" >/dev/null 2>&1 && return
  echo "installing Debian's $2 (for $1)" >&2
  $sudo apt-get install -y --no-install-recommends "$2" >/dev/null
}
need_deb cmake cmake
need_deb ninja ninja-build
need_deb ansible-playbook ansible
command -v terraform >/dev/null 2>&1 || echo "terraform is not installed: its peer benchmark is skipped" >&2

if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
if command -v plinth-build >/dev/null 2>&1; then
  plinth-build "$build" --target plinth redfish-emulator aws-ec2-emulator gcp-emulator azure-emulator >/dev/null
else
  cmake --build "$build" --target plinth redfish-emulator aws-ec2-emulator gcp-emulator \
    azure-emulator -j"$(nproc)" >/dev/null
fi
# The plan section's PostgreSQL row plans against the state in the repository's test server,
# and the apply section measures what an apply writes into it.
postgres=${PLINTH_BENCH_POSTGRES_URL:-}
if [ -z "$postgres" ] && [[ -z "${ONLY:-}" || ",${ONLY}," == *",plan,"* || ",${ONLY}," == *",apply,"* ]]; then
  postgres=$(bash .ci/postgres 2>/dev/null | tail -n1)
fi
exec /usr/bin/python3 bench/bench.py --plinth "$build/engine/plinth" --postgres "$postgres" \
  --emulator "$build/tests/emulators/redfish/redfish-emulator" \
  --aws-emulator "$build/tests/emulators/aws-ec2/aws-ec2-emulator" \
  --gcp-emulator "$build/tests/emulators/gcp/gcp-emulator" \
  --azure-emulator "$build/tests/emulators/azure/azure-emulator"
