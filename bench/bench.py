#!/usr/bin/env python3
"""The benchmarks of docs/benchmarks.md, driven by bench/run.sh (which builds
and installs what this needs); writes the generated tables into the doc.

    /usr/bin/python3 bench/bench.py --plinth B/engine/plinth --emulator B/.../redfish-emulator

Every figure is the median of --runs runs after one warm-up, with the spread
(min-max); peak RSS is the largest resident set of the command and its
children (wait4), as /usr/bin/time -v reports it.
"""
import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOCKUP = os.path.join(ROOT, "..", "shared", "testdata", "redfish", "public-rackmount1")


def run_once(cmd, env=None, ok=(0,), cwd=None):
    """Runs cmd; returns (wall seconds, peak RSS MiB, stderr text)."""
    err = tempfile.TemporaryFile()
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    text = err.read().decode(errors="replace")
    if p.returncode not in ok:
        sys.stderr.write(text[-4000:])
        raise SystemExit(f"benchmark command failed ({p.returncode}): {' '.join(cmd)}")
    return wall, usage.ru_maxrss / 1024.0, text


class Figure:
    def __init__(self, walls, rss, runs, note=""):
        self.walls, self.rss, self.runs, self.note = walls, rss, runs, note
        self.median = statistics.median(walls)
        self.rss_median = statistics.median(rss)

    def cells(self):
        return [f"{self.median:.2f}", f"{min(self.walls):.2f}–{max(self.walls):.2f}", f"{self.rss_median:.0f}",
                str(self.runs)]


def measure(cmd, runs, env=None, ok=(0,), before=None, warmup=1):
    walls, rss, last = [], [], ""
    for i in range(warmup + runs):
        if before:
            before()
        w, r, last = run_once(cmd, env=env, ok=ok)
        if i >= warmup:
            walls.append(w)
            rss.append(r)
    f = Figure(walls, rss, runs)
    f.stderr = last
    return f


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def machine():
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = int(line.split()[1]) // (1024 * 1024)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    load = os.getloadavg()[0]
    return (f"{os.cpu_count()} cores ({model}), {mem} GiB, {platform.machine()}, Linux {platform.release()}, "
            f"commit {commit}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
            f"{load:.1f} when it started")


def gen(out, pools, per, *extra):
    if not os.path.exists(out):
        with open(out, "w") as f:
            subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "gen_blueprint.py"), "--pools", str(pools),
                            "--nodes-per-pool", str(per), *extra], stdout=f, check=True)
    return out


# ---- plan -----------------------------------------------------------------

def bench_plan(a, work):
    rows, figures = [], {}
    for pools, per in ((50, 20), (500, 20), (2000, 50)):
        n = pools * per
        if n > a.max_nodes:
            continue
        bp = gen(os.path.join(work, f"bp-{n}.yaml"), pools, per)
        state = os.path.join(work, "none.state.json")
        plan = [a.plinth, "plan", bp, "--state", state, "--refresh=false", "-lock=false"]
        for label, cmd, ok in ((f"validate", [a.plinth, "validate", bp], (0,)),
                               ("plan", plan + ["--detailed-exitcode"], (2,)),
                               ("plan --json", plan + ["--json"], (0,))):
            f = measure(cmd, a.runs, ok=ok)
            figures[(label, n)] = f
            rows.append([f"{n:,}", pools, label] + f.cells())
            print(f"  {label} {n}: {f.median:.2f} s {f.rss_median:.0f} MiB", flush=True)
    out = [table(["nodes", "pools", "command", "median s", "min–max s", "peak RSS MiB", "runs"], rows), ""]
    growth = []
    for small, big in ((1000, 10000), (10000, 100000)):
        if ("plan", small) in figures and ("plan", big) in figures:
            growth.append(f"{small:,} → {big:,} nodes: ×{figures[('plan', big)].median / figures[('plan', small)].median:.1f} "
                          f"time, ×{figures[('plan', big)].rss_median / figures[('plan', small)].rss_median:.1f} memory")
    if growth:
        out.append("Growth of `plan` (×10 nodes each): " + "; ".join(growth) + ".")
    json_ratio = [f"{n:,}: {figures[('plan --json', n)].median / figures[('plan', n)].median:.2f}"
                  for (label, n) in figures if label == "plan"]
    out.append("`--json` / text time: " + ", ".join(json_ratio) + ".")
    verdicts = []
    for n, secs, mib in ((10000, 0.3, 100), (100000, 2.0, 500)):
        f = figures.get(("plan", n))
        if f:
            verdicts.append(f"{n:,} nodes < {secs} s and < {mib} MB: **{'holds' if f.median < secs else 'not met'}** for "
                            f"time ({f.median:.2f} s), **{'holds' if f.rss_median * 1.048576 < mib else 'not met'}** for "
                            f"memory ({f.rss_median:.0f} MiB)")
    if verdicts:
        out.append("Targets: " + "; ".join(verdicts) + ".")
    return "\n".join(out), figures


# ---- terraform ------------------------------------------------------------

def bench_terraform(a, work, plan_figures):
    tf = shutil.which("terraform")
    if not tf:
        return "`terraform` is not installed here: the Terraform peer was skipped."
    version = subprocess.run([tf, "version"], capture_output=True, text=True).stdout.splitlines()[0]
    rows = []
    for n in (1000, 10000):
        if n > a.max_nodes or n > a.terraform_max:
            continue
        d = os.path.join(work, f"tf-{n}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "main.tf"), "w") as f:
            for i in range(n):
                f.write(f'resource "terraform_data" "node_{i}" {{\n  input = {{\n    gpu = "H100-80GB"\n'
                        f'    gpus_per_node = 8\n    cpu_cores = 96\n    memory_gb = 1536\n    stack = "s{i % 3}"\n'
                        f'    bmc_endpoint = "https://bmc-{i}.dc1.example"\n    boot_method = "pxe"\n  }}\n}}\n')
        env = dict(os.environ, TF_IN_AUTOMATION="1", CHECKPOINT_DISABLE="1")
        subprocess.run([tf, "init", "-input=false", "-no-color"], cwd=d, env=env, capture_output=True, check=True)
        cmd = [tf, f"-chdir={d}", "plan", "-refresh=false", "-input=false", "-lock=false", "-no-color"]
        f = measure(cmd, a.runs if n <= 1000 else max(1, min(a.runs, a.terraform_runs)), env=env)
        p = plan_figures.get(("plan", n))
        ratio = f"{f.median / p.median:.1f}×" if p else "—"
        rows.append([f"{n:,}", f"{f.median:.2f}", f"{min(f.walls):.2f}–{max(f.walls):.2f}", f"{f.rss_median:.0f}",
                     f.runs, f"{p.median:.2f}" if p else "—", f"{p.rss_median:.0f}" if p else "—", ratio])
        print(f"  terraform {n}: {f.median:.2f} s", flush=True)
    return (f"{version}, `terraform plan -refresh=false` of N `terraform_data` resources with seven attributes each "
            f"(no provider, empty state) against `plinth plan` of N nodes (which also validates, renders cloud-init "
            f"and runs 19 policies):\n\n" +
            table(["N", "terraform median s", "min–max s", "terraform RSS MiB", "runs", "plinth median s",
                   "plinth RSS MiB", "terraform / plinth"], rows))


# ---- policy engine --------------------------------------------------------

PATHOLOGICAL = {
    "loop": "while true do end",
    "recursion": "local function f(n) return f(n + 1) + 1 end\n    f(1)",
    "tables": "local t = {}\n    for i = 1, 1e9 do t[i] = {i, tostring(i)} end",
}


def policies_run(stderr):
    m = re.search(r"policy check: (\d+) policies run, (\d+) mandatory failure\(s\), (\d+) advisory warning\(s\), "
                  r"(\d+) waived, (\d+) error\(s\)", stderr)
    return tuple(int(x) for x in m.groups()) if m else None


def bench_policy(a, work):
    n = min(10000, a.max_nodes)
    pools = n // 20
    bp_all = gen(os.path.join(work, f"bp-{n}.yaml"), pools, 20)
    bp_none = gen(os.path.join(work, f"bp-{n}-nocompliance.yaml"), pools, 20, "--compliance", "")
    state = os.path.join(work, "none.state.json")
    base = ["plan", "--state", state, "--refresh=false", "-lock=false"]
    full = measure([a.plinth, "plan", bp_all] + base[1:], a.runs, ok=(0,))
    bare = measure([a.plinth, "plan", bp_none] + base[1:], a.runs, ok=(0,))
    p_full, p_bare = policies_run(full.stderr), policies_run(bare.stderr)
    resources = n + 0  # every policy sees every resource; the nodes dominate
    lines = []
    if p_full and p_bare and full.median > bare.median:
        extra = p_full[0] - p_bare[0]
        rate = extra * resources / (full.median - bare.median)
        lines.append(f"Policy engine, {n:,} nodes: {p_full[0]} policies run with `compliance: [soc2]`, {p_bare[0]} "
                     f"without; the {extra} more cost {full.median - bare.median:.2f} s (median {full.median:.2f} s "
                     f"against {bare.median:.2f} s), about **{rate:,.0f} policy × resource evaluations per second** "
                     f"(the shared context, built once per run, is in both).")
    rows = []
    for name, body in PATHOLOGICAL.items():
        d = os.path.join(work, f"pathological-{name}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"{name}.lua"), "w") as f:
            f.write(f'policy {{\n  id = "BENCH-{name.upper()}",\n  title = "A pathological check ({name})",\n'
                    f'  description = "Never ends well: the sandbox limits must stop it.",\n  severity = "low",\n'
                    f'  enforcement = "advisory",\n  controls = {{}},\n  check = function(ctx)\n    {body}\n  end,\n}}\n')
        f = measure([a.plinth, "plan", bp_all] + base[1:] + ["--policy-dir", d], a.runs, ok=(0,))
        got = policies_run(f.stderr)
        stopped = re.search(r"BENCH-[A-Z]+ could not run: ([^\n]*)", f.stderr)
        others_same = got is not None and p_full is not None and got[1] == p_full[1] and got[2] == p_full[2]
        rows.append([name, f"{f.median:.2f}", f"{f.median - full.median:+.2f}",
                     (stopped.group(1)[:110] if stopped else "(no error verdict)").replace("|", "\\|"),
                     "yes" if others_same else "**no**", f.runs])
    lines.append("")
    lines.append(f"A pathological advisory policy added to the same {n:,}-node plan (limits: 10,000,000 instructions, "
                 f"64 MiB, 10 s per check; median {full.median:.2f} s without it):")
    lines.append("")
    lines.append(table(["policy", "plan median s", "added s", "how it was stopped", "other verdicts unchanged", "runs"],
                       rows))
    return "\n".join(lines)


# ---- apply ----------------------------------------------------------------

class EmulatorRun:
    def __init__(self, a, work, args, log):
        self.tls = tempfile.mkdtemp(dir=work)
        cmd = [a.emulator, "--mockup", MOCKUP, "--tls-dir", self.tls, "--request-log", log] + args
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.base = None
        for line in self.p.stdout:
            if line.startswith("listening "):
                self.base = line.split()[1]
            if line.strip() == "ready":
                break
        if not self.base:
            raise SystemExit("redfish-emulator did not start: " + " ".join(cmd))
        self.ca = os.path.join(self.tls, "ca.pem")

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=30)


def count_lines(path):
    with open(path) as f:
        return sum(1 for _ in f)


def bench_apply(a, work):
    rows = []
    latency = a.latency_ms
    env = dict(os.environ, BMC_CREDENTIALS="admin:admin")
    common = ["--gpus", "8", "--memory-gib", "2048", "--power-state", "Off", "--power-delay-ms", "0",
              "--latency-ms", str(latency)]
    cases = [(100, 16, "on"), (100, 16, "off"), (1000, 256, "on")]
    for nodes, par, expand in cases:
        if nodes > a.apply_max:
            continue
        log = os.path.join(work, f"apply-{nodes}-{expand}.jsonl")
        em = EmulatorRun(a, work, ["--port", "0", "--bmcs", str(nodes), "--threads", str(max(64, 2 * par)),
                                   "--expand", expand] + common, log)
        try:
            bp = os.path.join(work, f"apply-{nodes}-{expand}.yaml")
            if os.path.exists(bp):
                os.remove(bp)
            gen(bp, 1, nodes, "--compliance", "", "--bios", "ProcTurboMode: Disabled", "--bmc-endpoint",
                em.base + "/bmc/{index}", "--bmc-ca", em.ca)
            state = os.path.join(work, f"apply-{nodes}.state.json")

            def fresh():
                for f in (state, state + ".lock"):
                    if os.path.exists(f):
                        os.remove(f)
                open(log, "w").close()  # the emulator appends (O_APPEND): emptied, not removed

            cmd = [a.plinth, "apply", bp, "--state", state, "--auto-approve", "--allow-dirty", "--parallelism",
                   str(par), "--provider-option", f"baremetal.parallelism={par}"]
            f = measure(cmd, a.apply_runs, env=env, before=fresh)
            per_node = count_lines(log) / nodes
        finally:
            em.stop()
        bound = per_node * nodes * latency / 1000.0 / par
        rows.append([f"Plinth, $expand {'offered' if expand == 'on' else 'not offered'}", nodes, par,
                     f"{f.median:.2f}", f"{min(f.walls):.2f}–{max(f.walls):.2f}", f"{per_node:.1f}",
                     f"{bound:.2f}", f"{bound / f.median:.2f}", f.runs])
        print(f"  apply {nodes} p{par} expand={expand}: {f.median:.2f} s, {per_node:.1f} req/node", flush=True)
    ansible = bench_ansible(a, work, common)
    if ansible:
        rows.append(ansible)
    out = [f"Each BMC answers every request after {latency} ms (`--latency-ms {latency}`); power transitions are "
           f"instant (`--power-delay-ms 0`), so the wall time is the requests' latency. A Plinth create is: "
           f"plan-time inventory read, boot override, BIOS settings, reset, read-back; the Ansible peer does "
           f"`SetOneTimeBoot` (Pxe) and `PowerOn` with `community.general.redfish_command`. Latency bound = "
           f"requests × latency / parallelism.", "",
           table(["tool", "nodes", "parallelism", "median s", "min–max s", "requests per node", "latency bound s",
                  "bound / wall", "runs"], rows)]
    plinth_100 = next((r for r in rows if r[0].startswith("Plinth, $expand offered") and r[1] == 100), None)
    if ansible and plinth_100:
        out.append("")
        out.append(f"Plinth against Ansible on the same 100 BMCs: **{float(ansible[3]) / float(plinth_100[3]):.1f}× "
                   f"faster** (target 20×).")
    return "\n".join(out)


def bench_ansible(a, work, common):
    playbook_bin = shutil.which("ansible-playbook")
    if not playbook_bin:
        return None
    nodes, forks = 100, 16
    log = os.path.join(work, "ansible.jsonl")
    port_base = a.ansible_port_base
    em = EmulatorRun(a, work, ["--port-base", str(port_base), "--bmcs", str(nodes), "--expand", "on"] + common, log)
    try:
        d = os.path.join(work, "ansible")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "hosts.ini"), "w") as f:
            f.write("[bmcs]\n")
            for i in range(nodes):
                f.write(f"bmc{i} baseuri=127.0.0.1:{port_base + i}\n")
        with open(os.path.join(d, "play.yml"), "w") as f:
            f.write("""- hosts: bmcs
  gather_facts: false
  connection: local
  tasks:
    - name: one-time boot from PXE
      community.general.redfish_command:
        category: Systems
        command: SetOneTimeBoot
        bootdevice: Pxe
        baseuri: "{{ baseuri }}"
        username: admin
        password: admin
    - name: power on
      community.general.redfish_command:
        category: Systems
        command: PowerOn
        baseuri: "{{ baseuri }}"
        username: admin
        password: admin
""")
        env = dict(os.environ, ANSIBLE_HOST_KEY_CHECKING="False", ANSIBLE_FORKS=str(forks),
                   ANSIBLE_PYTHON_INTERPRETER="/usr/bin/python3", ANSIBLE_LOCALHOST_WARNING="False")

        def fresh():
            open(log, "w").close()

        cmd = [playbook_bin, "-i", os.path.join(d, "hosts.ini"), "-f", str(forks), os.path.join(d, "play.yml")]
        f = measure(cmd, max(1, min(a.apply_runs, a.ansible_runs)), env=env, before=fresh, warmup=0)
        per_node = count_lines(log) / nodes
    finally:
        em.stop()
    bound = per_node * nodes * a.latency_ms / 1000.0 / forks
    print(f"  ansible {nodes} forks {forks}: {f.median:.2f} s, {per_node:.1f} req/node", flush=True)
    return ["Ansible community.general.redfish_command", nodes, forks, f"{f.median:.2f}",
            f"{min(f.walls):.2f}–{max(f.walls):.2f}", f"{per_node:.1f}", f"{bound:.2f}", f"{bound / f.median:.2f}",
            f.runs]


# ---- the doc --------------------------------------------------------------

def write_section(doc, name, text):
    with open(doc) as f:
        content = f.read()
    begin, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{begin}\n{text}\n{end}"
    if begin in content:
        content = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, content, flags=re.S)
    else:
        content += "\n" + block + "\n"
    with open(doc, "w") as f:
        f.write(content)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plinth", required=True)
    ap.add_argument("--emulator", required=True)
    ap.add_argument("--runs", type=int, default=int(os.environ.get("RUNS", 5)))
    ap.add_argument("--apply-runs", type=int, default=int(os.environ.get("APPLY_RUNS", 5)))
    ap.add_argument("--ansible-runs", type=int, default=int(os.environ.get("ANSIBLE_RUNS", 5)))
    ap.add_argument("--terraform-runs", type=int, default=int(os.environ.get("TERRAFORM_RUNS", 5)))
    ap.add_argument("--max-nodes", type=int, default=int(os.environ.get("MAX_NODES", 100000)))
    ap.add_argument("--apply-max", type=int, default=int(os.environ.get("APPLY_MAX", 1000)))
    ap.add_argument("--terraform-max", type=int, default=int(os.environ.get("TERRAFORM_MAX", 10000)))
    ap.add_argument("--latency-ms", type=int, default=50)
    ap.add_argument("--ansible-port-base", type=int, default=int(os.environ.get("ANSIBLE_PORT_BASE", 24000)))
    ap.add_argument("--only", default=os.environ.get("ONLY", "plan,terraform,policy,apply"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    a = ap.parse_args()
    a.plinth, a.emulator = os.path.abspath(a.plinth), os.path.abspath(a.emulator)
    work = os.path.join(ROOT, "bench", "out")
    os.makedirs(work, exist_ok=True)
    only = set(a.only.split(","))
    write_section(a.doc, "machine", "Machine: " + machine() + ".")
    plan_figures = {}
    if "plan" in only:
        print("plan", flush=True)
        text, plan_figures = bench_plan(a, work)
        write_section(a.doc, "plan", text)
    if "terraform" in only:
        print("terraform", flush=True)
        write_section(a.doc, "terraform", bench_terraform(a, work, plan_figures))
    if "policy" in only:
        print("policy", flush=True)
        write_section(a.doc, "policy", bench_policy(a, work))
    if "apply" in only:
        print("apply", flush=True)
        write_section(a.doc, "apply", bench_apply(a, work))
    return 0


if __name__ == "__main__":
    sys.exit(main())
