#!/usr/bin/env python3
"""Generates a large, valid plinth/v1 blueprint for benchmarks.

    python3 bench/gen_blueprint.py --pools 500 --nodes-per-pool 20 > /tmp/bp-10k.yaml

Pools cycle through a few GPU models, stacks, VLANs and tiers so the domain
rules and the planner see realistic variety; every value passes validation.
"""
import argparse
import sys

GPUS = [("H100-80GB", 8, 1536), ("A100-80GB", 8, 1024), ("A100-40GB", 8, 1024), ("H200-141GB", 8, 2048)]
DIGEST = "sha256:" + "3f" * 32


def bmc(a, p: int) -> str:
    """The pool's bmc: made-up hosts, or the emulator's listeners (one port each)."""
    if a.bmc_endpoint:
        return f'{{endpoints: "{a.bmc_endpoint}", credentials: "env:BMC_CREDENTIALS", ca_bundle: "{a.bmc_ca}"}}'
    if not a.bmc_port_base:
        return f'{{endpoints: "https://bmc-{p}-{{index}}.dc1.example", credentials: "env:BMC_CREDENTIALS"}}'
    first = a.bmc_port_base + p * a.nodes_per_pool
    ports = ", ".join(f'"https://127.0.0.1:{first + i}"' for i in range(a.nodes_per_pool))
    return f'{{endpoints: [{ports}], credentials: "env:BMC_CREDENTIALS", ca_bundle: "{a.bmc_ca}"}}'


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", type=int, default=500)
    ap.add_argument("--nodes-per-pool", type=int, default=20)
    ap.add_argument("--name", default="bench")
    ap.add_argument("--compliance", default="soc2", help="comma-separated frameworks ('' for none)")
    ap.add_argument("--bmc-port-base", type=int, default=0,
                    help="BMC i of the blueprint at https://127.0.0.1:(BASE+i) (redfish-emulator --port-base)")
    ap.add_argument("--bmc-endpoint", default="",
                    help="endpoint template of every pool's BMCs, e.g. https://127.0.0.1:8443/bmc/{index}")
    ap.add_argument("--bios", default="SriovEnable: Enabled, ProcTurboMode: Enabled",
                    help="every pool's BIOS attributes, as YAML flow mapping content")
    ap.add_argument("--bmc-ca", default="", help="CA bundle of the BMCs (redfish-emulator's ca.pem)")
    a = ap.parse_args()
    frameworks = ", ".join(f for f in a.compliance.split(",") if f)
    w = sys.stdout.write
    w(f"apiVersion: plinth/v1\nkind: Blueprint\nmetadata: {{name: {a.name}, owner: bench, compliance: [{frameworks}]}}\n")
    w("stacks:\n")
    for s, (drv, cuda) in enumerate([("550.54.15", "12.4"), ("560.35.03", "12.6"), ("570.124.06", "12.8")]):
        w(f"  s{s}:\n    driver: \"{drv}\"\n    cuda: \"{cuda}\"\n    cudnn: \"9.1.0\"\n"
          f"    frameworks: {{pytorch: \"2.3.1\"}}\n    images: [\"registry.example/train@{DIGEST}\"]\n")
    w("networks:\n  vlans:\n")
    for v in range(8):
        w(f"    - {{name: v{v}, id: {100 + v}, cidr: 10.{100 + v}.0.0/16, vrf: ml, purpose: training, mtu: 9000}}\n")
    w("  fabrics:\n    - {name: ib, kind: infiniband, speed_gbps: 400, topology: spine-leaf, oversubscription: \"1:1\"}\n")
    w("storage:\n  tiers:\n")
    for t in range(4):
        w(f"    - {{name: hot{t}, kind: nvme, capacity_tb: 200, classification: internal, "
          f"encryption: {{at_rest: aes-256-xts}}}}\n")
    w("access:\n  audit_logging: {api_server: true, storage: true, retention_days: 365}\n"
      "  transport: {tls_min: \"1.3\", mtls: true}\n")
    w("monitoring: {dcgm: true, prometheus: true, grafana: true}\n")
    w("node_pools:\n")
    for p in range(a.pools):
        gpu, per_node, mem = GPUS[p % len(GPUS)]
        w(f"  - name: pool-{p:05d}\n    provider: baremetal\n    count: {a.nodes_per_pool}\n    role: training\n"
          f"    hardware: {{gpu: {gpu}, gpus_per_node: {per_node}, cpu_cores: 96, memory_gb: {mem}}}\n"
          f"    stack: s{p % 3}\n    fabric: ib\n"
          f"    boot: {{method: pxe, image: \"https://images.example/ubuntu-24.04.iso\"}}\n"
          f"    bios: {{{a.bios}}}\n"
          f"    networks: [v{p % 8}]\n    storage: [hot{p % 4}]\n"
          f"    bmc: {bmc(a, p)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
