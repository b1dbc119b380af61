#!/usr/bin/env python3
"""The benchmarks of docs/benchmarks.md, driven by bench/run.sh (which builds
and installs what this needs); writes the generated tables into the doc.

    /usr/bin/python3 bench/bench.py --plinth B/engine/plinth --emulator B/.../redfish-emulator \
        --aws-emulator B/.../aws-ec2-emulator --gcp-emulator B/.../gcp-emulator --azure-emulator B/.../azure-emulator

Every figure is the median of --runs runs after one warm-up, with the spread
(min-max); peak RSS is the largest resident set of the command and its
children (wait4), as /usr/bin/time -v reports it.
"""
import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOCKUP = os.path.join(ROOT, "tests", "data", "third_party", "redfish", "public-rackmount1")


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

GENERATED_SECRETS = {"bmc_credentials": "env:BMC_CREDENTIALS"}  # as gen_blueprint.py writes them


def gen_state(a, bp, out):
    """A state recording every resource of `bp` as the planner expands it (from
    its `plan --json` against no state), so that planning `bp` against it
    changes nothing: the state a fleet of that size has after its apply."""
    none = os.path.join(os.path.dirname(out), "none.state.json")
    p = subprocess.run([a.plinth, "plan", bp, "--state", none, "--refresh=false", "-lock=false", "--json"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
    resources = []
    for c in json.loads(p.stdout)["resource_changes"]:
        attrs = {}
        for ch in c["changes"]:
            *parents, leaf = ch["path"].split(".")
            node = attrs
            for k in parents:
                node = node.setdefault(k, {})
            # The JSON plan hides sensitive values; the generator writes this one.
            node[leaf] = GENERATED_SECRETS[ch["path"]] if ch["sensitive"] else ch["after"]
        resources.append({"address": c["address"], "type": c["type"], "name": c["name"],
                          "index": -1 if c["index"] is None else c["index"], "provider": c["provider"],
                          "source": c["source"], "depends_on": [], "attributes": attrs, "computed": {}})
    resources.sort(key=lambda r: r["address"])
    doc = {"format_version": 1, "lineage": "00000000-0000-4000-8000-0000000be9c4", "serial": 1,
           "plinth_version": "0.1.0", "resources": resources}
    # The checksum is over the compact, key-sorted form (docs/state.md).
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    doc["checksum"] = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    with open(out, "w") as f:
        json.dump(doc, f)
    return len(resources)


def postgres_state(a, n, state_file):
    """`state_file` copied into PostgreSQL workspace bench-N (`plinth state migrate`, which brings
    a workspace of the same lineage up to date, so the bench can run again); its URL."""
    url = f"{a.postgres}{'&' if '?' in a.postgres else '?'}workspace=bench-{n}"
    subprocess.run([a.plinth, "state", "migrate", "--state", state_file, "--to", url],
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
    return url


def drop_postgres_states(a):
    """Removes the bench's workspaces from the database (they hold up to ~90 MB each)."""
    base = a.postgres.split("?", 1)[0]
    for table_name in ("plinth_state", "plinth_state_history", "plinth_state_changes", "plinth_state_lock"):
        subprocess.run(["psql", base, "-q", "-c", f"DELETE FROM {table_name} WHERE workspace LIKE 'bench-%'"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def bench_plan(a, work):
    rows, figures, planfile_sizes = [], {}, []

    def row(label, n, pools, cmd, ok):
        f = measure(cmd, a.runs, ok=ok)
        figures[(label, n)] = f
        rows.append([f"{n:,}", pools, label] + f.cells())
        print(f"  {label} {n}: {f.median:.2f} s {f.rss_median:.0f} MiB", flush=True)

    for pools, per in ((50, 20), (500, 20), (2000, 50)):
        n = pools * per
        if n > a.max_nodes:
            continue
        bp = gen(os.path.join(work, f"bp-{n}.yaml"), pools, per)
        state = os.path.join(work, "none.state.json")
        plan = [a.plinth, "plan", bp, "--state", state, "--refresh=false", "-lock=false"]
        row("validate", n, pools, [a.plinth, "validate", bp], (0,))
        row("plan", n, pools, plan + ["--detailed-exitcode"], (2,))
        row("plan --json", n, pools, plan + ["--json"], (0,))
        # The plan saved for `apply PLANFILE` (CI's plan step), and read back.
        planfile = os.path.join(work, f"plan-{n}.out")
        row("plan -out PLANFILE", n, pools, plan + ["-out", planfile], (0,))
        row("show PLANFILE", n, pools, [a.plinth, "show", planfile], (0,))
        planfile_sizes.append(f"{n:,} nodes {os.path.getsize(planfile) / 1e6:,.1f} MB")
        # The same blueprint against a state that records all of it: no changes.
        full = os.path.join(work, f"state-{n}.json")
        # In a process of its own: reading a large JSON plan grows this one, and a
        # child forked from a large process starts with its peak RSS (wait4 counts it).
        subprocess.run([sys.executable, "-c", "import sys, types; sys.path.insert(0, sys.argv[1]); import bench; "
                        "bench.gen_state(types.SimpleNamespace(plinth=sys.argv[2]), sys.argv[3], sys.argv[4])",
                        os.path.dirname(os.path.abspath(__file__)), a.plinth, bp, full], check=True)
        unchanged = ["--refresh=false", "-lock=false", "--detailed-exitcode"]
        row("plan, state of all (no changes)", n, pools, [a.plinth, "plan", bp, "--state", full] + unchanged, (0,))
        if a.postgres:
            # The same state in the PostgreSQL backend (the shared state of a team's CI).
            url = postgres_state(a, n, full)
            row("plan, state of all in PostgreSQL (no changes)", n, pools,
                [a.plinth, "plan", bp, "--state", url] + unchanged, (0,))
    if a.postgres:
        drop_postgres_states(a)
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
    if planfile_sizes:
        out.append("Plan files (`-out`): " + ", ".join(planfile_sizes) + ".")
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
    lines = [f"Policy engine, {n:,} nodes: {p_full[0] if p_full else '?'} policies run with `compliance: [soc2]`, "
             f"{p_bare[0] if p_bare else '?'} without: median {full.median:.2f} s against {bare.median:.2f} s (most "
             f"built-in policies read the blueprint's pools, not every node, so they cost little)."]
    # Evaluations per second: K more policies that each visit every resource
    # and read three of its attributes, as per-resource checks do.
    k = 100
    d = os.path.join(work, "per-resource")
    os.makedirs(d, exist_ok=True)
    for i in range(k):
        with open(os.path.join(d, f"visit{i:02d}.lua"), "w") as f:
            f.write(f'policy {{\n  id = "BENCH-VISIT-{i:02d}",\n  title = "Visits every resource",\n'
                    f'  description = "Reads three attributes of every resource.",\n  severity = "low",\n'
                    f'  enforcement = "advisory",\n  controls = {{}},\n  check = function(ctx)\n'
                    f'    for _, r in ipairs(ctx.resources()) do\n'
                    f'      if r.type == "baremetal.node" and r.gpu == "none{i}" and r.stack ~= r.fabric then\n'
                    f'        fail(r.address, "never")\n      end\n    end\n  end,\n}}\n')
    visit = measure([a.plinth, "plan", bp_all] + base[1:] + ["--policy-dir", d], a.runs, ok=(0,))
    p_visit = policies_run(visit.stderr)
    resources = n + 19  # the nodes, 3 stacks, 8 VLANs, a fabric, 4 tiers, audit logging, transport, monitoring
    if p_visit and p_full and p_visit[0] - p_full[0] == k and visit.median > full.median:
        rate = k * resources / (visit.median - full.median)
        lines.append("")
        lines.append(f"{k} policies more that each visit all {resources:,} resources (`ctx.resources()`) and read "
                     f"three attributes of each: median {visit.median:.2f} s against {full.median:.2f} s, about "
                     f"**{rate:,.0f} policy × resource evaluations per second**, building the resources' views "
                     f"included (each is built on first use and then shared: the built-in policies, reading the "
                     f"blueprint, build almost none).")
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

def start_emulator(cmd, stderr):
    """Starts an emulator and waits for its `listening URL ...` and `ready` lines: (process, URL)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr, text=True)
    base = None
    for line in p.stdout:
        if line.startswith("listening "):
            base = line.split()[1]
        if line.strip() == "ready":
            break
    if not base:
        raise SystemExit(f"{os.path.basename(cmd[0])} did not start: {' '.join(cmd)}")
    return p, base


class EmulatorRun:
    def __init__(self, a, work, args, log):
        self.tls = tempfile.mkdtemp(dir=work)
        cmd = [a.emulator, "--mockup", MOCKUP, "--tls-dir", self.tls, "--request-log", log] + args
        self.p, self.base = start_emulator(cmd, subprocess.DEVNULL)
        self.ca = os.path.join(self.tls, "ca.pem")

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=30)


def count_lines(path):
    with open(path) as f:
        return sum(1 for _ in f)


def measure_requests(cmd, runs, env, log, fresh, nodes, warmup=1):
    """measure() of an apply against an emulator logging each request to `log` (emptied by fresh()):
    the Figure, the median requests per node of the measured runs, and that as a table cell with the
    runs' range in brackets where they differ (the count varies with a run's length where sessions
    expire)."""
    counted = []

    def before_run():
        counted.append(count_lines(log) if os.path.exists(log) else 0)  # the run before this one
        fresh()

    f = measure(cmd, runs, env=env, before=before_run, warmup=warmup)
    counted.append(count_lines(log))
    per_run = [c / nodes for c in counted[1 + warmup:]]  # [0]: before the first run; then the warm-ups
    per_node = statistics.median(per_run)
    cell = f"{per_node:.1f}"
    if f"{min(per_run):.1f}" != f"{max(per_run):.1f}":
        cell += f" ({min(per_run):.1f}–{max(per_run):.1f})"
    return f, per_node, cell


def postgres_document_size(a, url):
    """The length of the current document of the workspace `url` names."""
    base, workspace = a.postgres.split("?", 1)[0], url.rsplit("workspace=", 1)[1]
    out = subprocess.run(["psql", base, "-At", "-c",
                          f"SELECT length(document) FROM plinth_state WHERE workspace = '{workspace}'"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return int(out)


def apply_costs(cmd, env, nodes, final_size):
    """One more apply with --json: (CPU ms per node, state bytes written, final state bytes, saves);
    final_size() gives the state's size after it."""
    out = tempfile.TemporaryFile()
    p = subprocess.Popen(cmd + ["--json"], stdout=out, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)} --json")
    out.seek(0)
    summary = None
    for line in out.read().decode(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("type") == "apply_summary":
            summary = event
    if not summary:
        raise SystemExit(f"no apply_summary from {' '.join(cmd)} --json")
    cpu_ms = (usage.ru_utime + usage.ru_stime) * 1000.0 / nodes
    return cpu_ms, summary["state"]["bytes_written"], final_size(), summary["state"]["saves"]


# plinth links jemalloc with thp:always (engine/cli/allocator.cpp); the other rows change
# that through the environment: a jemalloc option, or another allocator preloaded.
MIMALLOC = "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2"
ALLOCATORS = [("jemalloc 5, thp:always (as shipped)", {}, None),
              ("jemalloc 5, MALLOC_CONF=thp:default", {"MALLOC_CONF": "thp:default"}, None),
              ("mimalloc 2 (libmimalloc2.0, LD_PRELOAD)", {"LD_PRELOAD": MIMALLOC}, MIMALLOC)]


def bench_allocators(cmd, env, nodes, fresh, state, runs=3):
    """The same apply with plinth's allocator as shipped, without huge pages, and with each other
    allocator Debian has that is installed (LD_PRELOAD): rows of (allocator, median CPU ms per
    node, min-max)."""
    rows = []
    for name, extra, needs in ALLOCATORS:
        if needs and not os.path.exists(needs):
            continue
        run_env = dict(env, **extra)
        cpu = []
        for _ in range(runs):
            fresh()
            cpu.append(apply_costs(cmd, run_env, nodes, lambda: os.path.getsize(state))[0])
        cpu.sort()
        rows.append([name, nodes, f"{statistics.median(cpu):.2f}", f"{cpu[0]:.2f}–{cpu[-1]:.2f}", runs])
    return rows


def bench_apply(a, work):
    rows = []
    allocators = []
    latency = a.latency_ms
    env = dict(os.environ, BMC_CREDENTIALS="admin:admin")
    common = ["--gpus", "8", "--memory-gib", "2048", "--power-state", "Off", "--power-delay-ms", "0",
              "--latency-ms", str(latency)]
    cases = [(100, 16, "on"), (100, 16, "off"), (1000, 256, "on"), (10000, 256, "on")]
    costs = []
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
            f, per_node, requests_cell = measure_requests(cmd, a.apply_runs, env, log, fresh, nodes)
            if expand == "on":
                fresh()
                cpu_ms, written, final, saves = apply_costs(cmd, env, nodes, lambda: os.path.getsize(state))
                costs.append(["local file", nodes, par, f"{cpu_ms:.2f}", f"{saves:,}", f"{written:,}",
                              f"{final:,}", f"{written / final:.2f}"])
                if nodes == 1000:
                    allocators = bench_allocators(cmd, env, nodes, fresh, state)
                if a.postgres:
                    url = f"{a.postgres}{'&' if '?' in a.postgres else '?'}workspace=bench-apply-{nodes}"
                    drop_postgres_states(a)
                    fresh()
                    pg_cmd = [url if c == state else c for c in cmd]
                    cpu_ms, written, final, saves = apply_costs(pg_cmd, env, nodes,
                                                                lambda: postgres_document_size(a, url))
                    drop_postgres_states(a)
                    costs.append(["PostgreSQL", nodes, par, f"{cpu_ms:.2f}", f"{saves:,}", f"{written:,}",
                                  f"{final:,}", f"{written / final:.2f}"])
        finally:
            em.stop()
        bound = per_node * nodes * latency / 1000.0 / par
        rows.append([f"Plinth, $expand {'offered' if expand == 'on' else 'not offered'}", nodes, par,
                     f"{f.median:.2f}", f"{min(f.walls):.2f}–{max(f.walls):.2f}", requests_cell,
                     f"{bound:.2f}", f"{bound / f.median:.2f}", f.runs])
        print(f"  apply {nodes} p{par} expand={expand}: {f.median:.2f} s, {requests_cell} req/node", flush=True)
    ansible = bench_ansible(a, work, common)
    if ansible:
        rows.append(ansible)
    out = [f"Each BMC answers every request after {latency} ms (`--latency-ms {latency}`); power transitions are "
           f"instant (`--power-delay-ms 0`), so the wall time is the requests' latency. A Plinth create is: "
           f"plan-time inventory read, boot override, BIOS settings, reset, read-back; the Ansible peer does "
           f"`SetOneTimeBoot` (Pxe) and `PowerOn` with `community.general.redfish_command`. Requests per node: "
           f"the median of the runs' counts in the emulator's request log, their range in brackets where they "
           f"differ. Latency bound = requests × latency / parallelism.", "",
           table(["tool", "nodes", "parallelism", "median s", "min–max s", "requests per node", "latency bound s",
                  "bound / wall", "runs"], rows)]
    if costs:
        out += ["", "What each Plinth apply (`$expand` offered) cost, from one more run with `--json`: CPU time "
                "(user + system) per node, and the state it wrote (`apply_summary`'s `state.saves` and "
                "`state.bytes_written`: change-log records, the fold and history copies; docs/state.md) against the "
                "final state's size (the file, or the document in PostgreSQL; goal: at most 3×).", "",
                table(["state", "nodes", "parallelism", "CPU ms per node", "saves", "state bytes written",
                       "final state bytes", "written / final"], costs)]
    if allocators:
        out += ["", "The 1,000-node apply with plinth's allocator as shipped (jemalloc, its memory on huge pages), "
                "without the huge pages, and with mimalloc loaded by `LD_PRELOAD` when installed (apt-get install "
                "libmimalloc2.0): CPU time per node, user + system.", "",
                table(["allocator", "nodes", "median CPU ms per node", "min–max", "runs"], allocators)]
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
        f, per_node, requests_cell = measure_requests(cmd, max(1, min(a.apply_runs, a.ansible_runs)), env, log,
                                                      fresh, nodes, warmup=0)
    finally:
        em.stop()
    bound = per_node * nodes * a.latency_ms / 1000.0 / forks
    print(f"  ansible {nodes} forks {forks}: {f.median:.2f} s, {requests_cell} req/node", flush=True)
    return ["Ansible community.general.redfish_command", nodes, forks, f"{f.median:.2f}",
            f"{min(f.walls):.2f}–{max(f.walls):.2f}", requests_cell, f"{bound:.2f}", f"{bound / f.median:.2f}",
            f.runs]


# ---- cloud apply ----------------------------------------------------------
# One burst pool of N instances per cloud provider, applied against the
# repository's emulators (tests/emulators/{aws-ec2,gcp,azure}) the way
# tests/e2e/{aws,gcp,azure}_test.cpp drive them; requests from each
# emulator's /__emulator/counters.

CLOUD_HEAD = """apiVersion: plinth/v1
kind: Blueprint
metadata: {{name: bench-{key}, owner: ml-platform}}
stacks:
  train:
    driver: "550.54.15"
    cuda: "12.4"
    cudnn: "9.1.0"
    frameworks: {{pytorch: "2.3.1"}}
    images: ["nvcr.io/nvidia/pytorch@sha256:116f54c41d0405dbb10e7b04ebc31e262a5b8c85c1233fcf36eaee344d91ae58"]
storage:
  tiers:
    - {{name: ckpt, kind: object, backend: {backend}, region: {region}, capacity_tb: 10, classification: internal,
       encryption: {{at_rest: aes-256-gcm}}}}
monitoring: {{dcgm: true, prometheus: true}}
burst_pools:
  - name: gpu
    provider: {key}
    region: {region}
    instance_type: {instance_type}
    desired: {n}
    max: {n}
    spot: true
    stack: train
    checkpointing: {{interval_minutes: 30, target: ckpt}}
    storage: [ckpt]
"""
UNLIMITED = "100000:100000"  # a token bucket no benchmark empties


class Cloud:
    """What differs between the three providers: emulator flags, the pool, the
    environment a user sets, and how the emulator counts requests."""
    key = title = backend = region = instance_type = pool_extra = ""
    emulator_flags = []  # beyond latency and threads
    limits = {}  # provider options (environment): client-side rate limits lifted, polls every 5 ms

    def blueprint(self, n):
        return CLOUD_HEAD.format(key=self.key, backend=self.backend, region=self.region,
                                 instance_type=self.instance_type, n=n) + self.pool_extra

    def env(self, em, home):
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("AWS_", "GOOGLE_", "CLOUDSDK_", "AZURE_", "PLINTH_")) and k != "REQUESTS_CA_BUNDLE"}
        return dict(keep, HOME=home, **self.user_env(em), **self.limits)

    def counts(self, em):
        """{action: requests} so far, control endpoints not included."""
        raise NotImplementedError

    def instances(self, em):
        """Instances the emulator runs now."""
        raise NotImplementedError


class Aws(Cloud):
    key, title, backend, region, instance_type = "aws", "AWS EC2", "s3", "us-east-1", "p5.48xlarge"
    pool_extra = "    image: ami-0abcdef1234567890\n"
    emulator_flags = ["--pending-ms", "0", "--shutdown-ms", "0"]
    limits = {"PLINTH_AWS_REQUEST_RATES": f"mutating={UNLIMITED},non-mutating={UNLIMITED}", "PLINTH_AWS_POLL_MS": "5"}

    def user_env(self, em):
        return {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                "AWS_REGION": self.region, "AWS_ENDPOINT_URL_EC2": em.base, "AWS_CA_BUNDLE": em.ca}

    def counts(self, em):
        return {k: v["requests"] for k, v in em.control("GET", "/__emulator/counters")["actions"].items()}

    def instances(self, em):
        return len(em.control("GET", "/__emulator/instances?state=running")["instances"])


class Gcp(Cloud):
    key, title, backend, region, instance_type = "gcp", "GCP Compute Engine", "gcs", "us-central1", "a3-highgpu-8g"
    pool_extra = ("    zones: [us-central1-a, us-central1-b]\n"
                  "    image: projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts\n")
    emulator_flags = ["--operation-ms", "0"]
    limits = {"PLINTH_GCP_REQUESTS_PER_SECOND": "0", "PLINTH_GCP_POLL_MS": "5"}

    def user_env(self, em):
        # The emulator writes the service-account key file (its token_uri is the emulator's /token).
        return {"GOOGLE_APPLICATION_CREDENTIALS": os.path.join(em.tls, "service-account.json"),
                "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE": em.base + "/compute/v1/",
                "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE": em.ca}

    def counts(self, em):
        return {k: v["total"] for k, v in em.control("GET", "/__emulator/counters")["methods"].items()}

    def instances(self, em):
        return sum(1 for i in em.control("GET", "/__emulator/state")["instances"] if i["status"] == "RUNNING")


class Azure(Cloud):
    key, title, backend, region, instance_type = "azure", "Azure", "azure-blob", "eastus", "Standard_ND96isr_H100_v5"
    pool_extra = ('    resource_group: rg-burst\n    image: "Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:latest"\n'
                  '    ssh_public_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOPSKEYOPSKEYOPSKEYOPSKEYOPSKEYOPSKEY ops"\n')
    # ARM's own per-subscription buckets (200 writes at 10 a second) would make 1,000 VMs a matter of minutes.
    emulator_flags = ["--lro-delay-ms", "0", "--retry-after", "0", "--reads-bucket", UNLIMITED, "--writes-bucket",
                      UNLIMITED, "--deletes-bucket", UNLIMITED]
    limits = {"PLINTH_AZURE_REQUEST_RATES": f"reads={UNLIMITED},writes={UNLIMITED},deletes={UNLIMITED}",
              "PLINTH_AZURE_POLL_MS": "5"}

    def user_env(self, em):
        return {"AZURE_TENANT_ID": "72f1c1a4-8a9e-4c0c-9d4b-2f7a1e5b6c3d",
                "AZURE_CLIENT_ID": "3c9d7e2a-41f6-4b8a-9c0d-8e7f6a5b4c3d", "AZURE_CLIENT_SECRET": "plinth-emulator-secret",
                "AZURE_SUBSCRIPTION_ID": "5f3c2a1b-9d8e-4f7a-8b6c-0d1e2f3a4b5c", "AZURE_AUTHORITY_HOST": em.base,
                "AZURE_RESOURCE_MANAGER_ENDPOINT": em.base, "REQUESTS_CA_BUNDLE": em.ca}

    def counts(self, em):
        return dict(em.control("GET", "/__emulator/counters")["byOperation"])

    def instances(self, em):
        return len(em.control("GET", "/__emulator/vms"))


class CloudEmulatorRun:
    """A cloud emulator with a fresh world: `listening URL ...`, then `ready`."""

    def __init__(self, binary, work, args):
        self.dir = tempfile.mkdtemp(dir=work)
        self.tls = os.path.join(self.dir, "tls")
        self.stderr = os.path.join(self.dir, "stderr")
        cmd = [binary, "--port", "0", "--tls-dir", self.tls, "--request-log", os.path.join(self.dir, "requests.jsonl")]
        with open(self.stderr, "w") as err:
            self.p, self.base = start_emulator(cmd + args, err)
        self.ca = os.path.join(self.tls, "ca.pem")
        self.ssl = ssl.create_default_context(cafile=self.ca)

    def control(self, method, path):
        req = urllib.request.Request(self.base + path, method=method)
        with urllib.request.urlopen(req, context=self.ssl, timeout=120) as r:
            return json.load(r)

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        code = self.p.wait(timeout=30)
        if code not in (0, -signal.SIGTERM):
            print(f"  warning: the emulator exited {code}; its stderr is in {self.stderr}", file=sys.stderr)
        shutil.rmtree(self.dir, ignore_errors=True)


def diff_counts(after, before):
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}


def cloud_parallelism(n):
    return 16 if n <= 100 else 64


def spread(values, fmt="{:,}"):
    lo, hi = min(values), max(values)
    return fmt.format(lo) if lo == hi else fmt.format(lo) + "–" + fmt.format(hi)


def bench_cloud_case(a, work, cloud, n):
    """Warm-up + APPLY_RUNS applies of n instances, each against a fresh emulator
    and state; then RUNS refreshing plans against the last one."""
    par = cloud_parallelism(n)
    d = os.path.join(work, f"cloud-{cloud.key}-{n}")
    os.makedirs(os.path.join(d, "home"), exist_ok=True)
    bp = os.path.join(d, "bp.yaml")
    with open(bp, "w") as f:
        f.write(cloud.blueprint(n))
    state = os.path.join(d, "plinth.state.json")
    flags = ["--latency-ms", str(a.latency_ms), "--threads", str(max(64, 2 * par))] + cloud.emulator_flags
    cmd = [a.plinth, "apply", bp, "--state", state, "--auto-approve", "--allow-dirty", "--parallelism", str(par)]
    walls, rss, requests, actions = [], [], [], {}
    for i in range(1 + a.apply_runs):
        shutil.rmtree(state + ".d", ignore_errors=True)
        for f in (state, state + ".lock"):
            if os.path.exists(f):
                os.remove(f)
        em = CloudEmulatorRun(getattr(a, cloud.key + "_emulator"), work, flags)
        try:
            w, r, _ = run_once(cmd, env=cloud.env(em, os.path.join(d, "home")))
            actions = cloud.counts(em)
            running = cloud.instances(em)
            if running != n:
                raise SystemExit(f"{cloud.title}: {running} instances running after the apply of {n}")
            if i >= 1:
                walls.append(w)
                rss.append(r)
                requests.append(sum(actions.values()))
            if i == a.apply_runs:
                refresh = bench_cloud_refresh(a, cloud, em, bp, state, os.path.join(d, "home"), n)
        finally:
            em.stop()
    f = Figure(walls, rss, a.apply_runs)
    bound = statistics.median(requests) * a.latency_ms / 1000.0 / min(par, n)  # n < par: n at once at most
    print(f"  {cloud.key} {n} p{par}: {f.median:.2f} s, {statistics.median(requests) / n:.2f} req/instance", flush=True)
    row = [cloud.title, f"{n:,}", par, f"{f.median:.2f}", f"{min(walls):.2f}–{max(walls):.2f}", f"{f.rss_median:.0f}",
           spread(requests), f"{statistics.median(requests) / n:.2f}", f"{bound:.2f}", f"{bound / f.median:.2f}",
           f.runs]
    return row, actions, refresh


def bench_cloud_refresh(a, cloud, em, bp, state, home, n):
    """`plinth plan` (which refreshes) of the n instances just applied: no changes."""
    cmd = [a.plinth, "plan", bp, "--state", state, "--detailed-exitcode"]
    env = cloud.env(em, home)
    probe = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # warm-up
    if probe.returncode != 0:
        raise SystemExit(f"{cloud.title}: the refresh of {n} instances failed (exit {probe.returncode}):\n"
                         f"{probe.stderr[-2000:]}")
    walls, rss, requests, actions = [], [], [], {}
    for _ in range(a.runs):
        before = cloud.counts(em)
        w, r, _ = run_once(cmd, env=env)
        actions = diff_counts(cloud.counts(em), before)
        walls.append(w)
        rss.append(r)
        requests.append(sum(actions.values()))
    f = Figure(walls, rss, a.runs)
    which = ", ".join(f"{v:,} × `{k}`" for k, v in sorted(actions.items()))
    print(f"  {cloud.key} {n} refresh: {f.median:.2f} s, {spread(requests)} requests", flush=True)
    return [cloud.title, f"{n:,}", spread(requests), which, f"{f.median:.2f}",
            f"{min(walls):.2f}–{max(walls):.2f}", f"{f.rss_median:.0f}", f.runs]


def what_a_create_is(cloud, actions, n):
    """'1 × RunInstances, 1 × DescribeInstances per instance; once: ...' from an apply's counters."""
    each, once = [], []
    for name, count in sorted(actions.items(), key=lambda kv: (-kv[1], kv[0])):
        whole, rest = divmod(count, n)
        if whole and rest <= 5:
            each.append(f"{whole} × `{name}`")
            if rest:
                once.append(f"{rest} × `{name}`")
        elif whole:
            each.append(f"{count / n:.2f} × `{name}` (on average)")
        else:
            once.append(f"{count} × `{name}`")
    text = f"**{cloud.title}**: {', '.join(each)} per instance"
    return text + (f"; once per run: {', '.join(once)}" if once else "")


def bench_cloud(a, work):
    clouds = [c for c in (Aws(), Gcp(), Azure()) if getattr(a, c.key + "_emulator")]
    sizes = [int(x) for x in a.cloud_nodes.split(",") if x.strip()]
    where = machine()  # this section may be run on its own (ONLY=cloud), on another day than the others
    rows, refreshes, creates = [], [], []
    for cloud in clouds:
        for n in sizes:
            row, actions, refresh = bench_cloud_case(a, work, cloud, n)
            rows.append(row)
            refreshes.append(refresh)
            if n == sizes[0]:
                creates.append(what_a_create_is(cloud, actions, n))
    limits = "; ".join(f"{c.title}: " + ", ".join(f"`{k}={v}`" for k, v in c.limits.items()) for c in clouds)
    flags = "; ".join(f"{c.title} `{' '.join(c.emulator_flags)}`" for c in clouds)
    out = [f"Every emulator runs with `--latency-ms {a.latency_ms}` (each API request is answered after {a.latency_ms} ms) "
           f"and `--threads` max(64, 2 × parallelism), plus {flags}; it is started afresh (no instances, counters at "
           f"zero) before every run, and the state is fresh too, so every run creates all N instances. Parallelism: "
           f"{', '.join(f'{cloud_parallelism(n)} for {n:,} instances' for n in sizes)}. Provider settings (environment): "
           f"{limits}. Requests are every API call the emulator counted (`/__emulator/counters`), token requests "
           f"included; latency bound = requests × latency / parallelism (or N, when smaller).",
           "",
           table(["provider", "instances", "parallelism", "median s", "min–max s", "peak RSS MiB", "requests",
                  "requests per instance", "latency bound s", "bound / wall", "runs"], rows),
           "",
           f"What an apply of {sizes[0]:,} instances sent, from the counters: " + "; ".join(creates) + ".",
           "",
           "Refresh: `plinth plan --detailed-exitcode` of the same blueprint against the state and the instances the "
           "last apply left (no changes), with the same latency; requests are those of one plan:",
           "",
           table(["provider", "instances", "requests", "which", "median s", "min–max s", "peak RSS MiB",
                  "runs"], refreshes)]
    out += ["", f"Measured on: {where}."]
    return "\n".join(out)


# ---- the doc --------------------------------------------------------------

ALL_SECTIONS = ("plan", "terraform", "policy", "apply", "cloud")

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
    ap.add_argument("--apply-max", type=int, default=int(os.environ.get("APPLY_MAX", 10000)))
    ap.add_argument("--terraform-max", type=int, default=int(os.environ.get("TERRAFORM_MAX", 10000)))
    ap.add_argument("--latency-ms", type=int, default=50)
    ap.add_argument("--aws-emulator", help="aws-ec2-emulator (the cloud section)")
    ap.add_argument("--gcp-emulator", help="gcp-emulator (the cloud section)")
    ap.add_argument("--azure-emulator", help="azure-emulator (the cloud section)")
    ap.add_argument("--cloud-nodes", default=os.environ.get("CLOUD_NODES", "100,1000"),
                    help="instances of the cloud applies, comma-separated")
    ap.add_argument("--ansible-port-base", type=int, default=int(os.environ.get("ANSIBLE_PORT_BASE", 24000)))
    ap.add_argument("--postgres", default=os.environ.get("PLINTH_BENCH_POSTGRES_URL", ""),
                    help="PostgreSQL URL for the plan section's PostgreSQL row (bench/run.sh starts .ci/postgres)")
    ap.add_argument("--only", default=os.environ.get("ONLY", ",".join(ALL_SECTIONS)))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    a = ap.parse_args()
    a.plinth, a.emulator = os.path.abspath(a.plinth), os.path.abspath(a.emulator)
    for name in ("aws_emulator", "gcp_emulator", "azure_emulator"):
        if getattr(a, name):
            setattr(a, name, os.path.abspath(getattr(a, name)))
    work = os.path.join(ROOT, "bench", "out")
    os.makedirs(work, exist_ok=True)
    only = set(a.only.split(","))
    # A run of every section names the machine once; a run of some sections
    # (ONLY=...) names it under each section it writes, and the others keep theirs.
    every = only >= set(ALL_SECTIONS)
    if every:
        write_section(a.doc, "machine", "Machine: " + machine() + ".")

    def section(name, text):
        write_section(a.doc, name, text if every or name == "cloud" else f"{text}\n\nMeasured on: {machine()}.")

    plan_figures = {}
    if "plan" in only:
        print("plan", flush=True)
        text, plan_figures = bench_plan(a, work)
        section("plan", text)
    if "terraform" in only:
        print("terraform", flush=True)
        section("terraform", bench_terraform(a, work, plan_figures))
    if "policy" in only:
        print("policy", flush=True)
        section("policy", bench_policy(a, work))
    if "apply" in only:
        print("apply", flush=True)
        section("apply", bench_apply(a, work))
    if "cloud" in only and not (a.aws_emulator or a.gcp_emulator or a.azure_emulator):
        print("cloud: skipped (no --aws-emulator, --gcp-emulator or --azure-emulator given)", flush=True)
    elif "cloud" in only:
        print("cloud", flush=True)
        write_section(a.doc, "cloud", bench_cloud(a, work))
    return 0


if __name__ == "__main__":
    sys.exit(main())
