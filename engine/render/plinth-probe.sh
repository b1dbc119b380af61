#!/bin/sh
# plinth-probe (written by plinth render; format 1, docs/verify.md)
# Writes what this node runs as Prometheus text for the node exporter's
# textfile collector, so that `plinth verify` can compare the node with its
# pool: NVIDIA driver and CUDA version, GPUs (product, memory, UUID, ECC, MIG
# mode and instances, NVLink), the Fabric Manager, IMEX, persistenced and
# auditd services, RDMA kernel modules, InfiniBand ports, mounts and whether
# each sits on dm-crypt, the kernel and OS. Reads only; changes nothing but
# its output file. A node without a GPU or nvidia-smi gets plinth_gpus 0.
#
# Usage: plinth-probe [--stdout | OUTPUT_FILE]
#   OUTPUT_FILE defaults to $PLINTH_PROBE_DIR/plinth.prom, the directory to
#   /var/lib/prometheus/node-exporter (Debian's and Ubuntu's node exporter
#   reads it with --collector.textfile.directory). The file is replaced
#   atomically.
# Environment (all optional):
#   PLINTH_PROBE_ROOT  read /etc, /proc and /sys under this directory
#   PLINTH_PROBE_NODE  the node's name (default: the host name)
#   PLINTH_PROBE_CONF  what the node was provisioned as (default
#                      $PLINTH_PROBE_ROOT/etc/plinth/probe.conf: pool=, stack=,
#                      blueprint= lines)
set -u
export LC_ALL=C
root=${PLINTH_PROBE_ROOT:-}
conf=${PLINTH_PROBE_CONF:-$root/etc/plinth/probe.conf}
node=${PLINTH_PROBE_NODE:-$(cat "$root/proc/sys/kernel/hostname" 2>/dev/null || hostname)}

# A label value: backslash, double quote and newline escaped.
esc() { printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' | tr '\n' ' '; }
conf_value() { [ -r "$conf" ] && sed -n "s/^$1=//p" "$conf" | head -n 1; }

N=$(esc "$node")
help() { printf '# HELP %s %s\n# TYPE %s gauge\n' "$1" "$2" "$1"; }

probe() {
  help plinth_probe_info "Probe output format and what the node was provisioned as (pool, stack, blueprint)."
  printf 'plinth_probe_info{node="%s",format="1",pool="%s",stack="%s",blueprint="%s"} 1\n' "$N" \
    "$(esc "$(conf_value pool)")" "$(esc "$(conf_value stack)")" "$(esc "$(conf_value blueprint)")"
  help plinth_probe_timestamp_seconds "When the probe ran (Unix time)."
  printf 'plinth_probe_timestamp_seconds{node="%s"} %s\n' "$N" "$(date +%s)"

  os_id=$(sed -n 's/^ID="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$root/etc/os-release" 2>/dev/null | head -n 1)
  os_version=$(sed -n 's/^VERSION_ID="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$root/etc/os-release" 2>/dev/null | head -n 1)
  kernel=$(cat "$root/proc/sys/kernel/osrelease" 2>/dev/null || uname -r)
  help plinth_node_os_info "Operating system and kernel."
  printf 'plinth_node_os_info{node="%s",os_id="%s",os_version="%s",kernel="%s"} 1\n' "$N" \
    "$(esc "$os_id")" "$(esc "$os_version")" "$(esc "$kernel")"

  gpus
  services
  modules
  infiniband
  mounts
}

# nvidia-smi -q -x: one element per line, which POSIX awk reads without an XML parser.
gpus() {
  xml=""
  ok=0
  if command -v nvidia-smi >/dev/null 2>&1; then
    if xml=$(nvidia-smi -q -x 2>/dev/null); then ok=1; fi
  fi
  if command -v nvidia-smi >/dev/null 2>&1; then
    help plinth_probe_check_ok "1 when a source of facts answered (nvidia-smi: 0 when it is installed but fails, e.g. no driver loaded)."
    printf 'plinth_probe_check_ok{node="%s",check="nvidia-smi"} %s\n' "$N" "$ok"
  fi
  if [ "$ok" -ne 1 ]; then
    help plinth_gpus "NVIDIA GPUs nvidia-smi lists."
    printf 'plinth_gpus{node="%s"} 0\n' "$N"
    return
  fi
  printf '%s\n' "$xml" | awk -v node="$N" '
    function tag(s) { sub(/^[ \t]*</, "", s); sub(/[ >].*/, "", s); return s }
    function val(s) { sub(/^[ \t]*<[^>]*>/, "", s); sub(/<.*/, "", s); gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return s }
    function mib(s) { sub(/ *MiB.*/, "", s); return s }
    {
      t = tag($0)
      if (t == "driver_version" && gpu < 0) driver = val($0)
      else if (t == "cuda_version" && gpu < 0) cuda = val($0)
      else if (t == "gpu") { gpu = n++; mig_n[gpu] = 0; links_up[gpu] = 0 }
      else if (t == "/gpu") gpu = -1
      else if (gpu >= 0) {
        if (t == "mig_devices") inmig = 1
        else if (t == "/mig_devices") inmig = 0
        else if (inmig) {
          if (t == "mig_device") { m = mig_n[gpu]++; mig_gi[gpu, m] = ""; mig_ci[gpu, m] = ""; mig_sm[gpu, m] = ""; mig_mem[gpu, m] = "" }
          else if (t == "gpu_instance_id") mig_gi[gpu, m] = val($0)
          else if (t == "compute_instance_id") mig_ci[gpu, m] = val($0)
          else if (t == "multiprocessor_count") mig_sm[gpu, m] = val($0)
          else if (t == "fb_memory_usage") mig_fb = 1
          else if (t == "/fb_memory_usage") mig_fb = 0
          else if (t == "total" && mig_fb) mig_mem[gpu, m] = mib(val($0))
        }
        else if (t == "product_name") product[gpu] = val($0)
        else if (t == "uuid") uuid[gpu] = val($0)
        else if (t == "fb_memory_usage") fb = 1
        else if (t == "/fb_memory_usage") fb = 0
        else if (t == "total" && fb) memory[gpu] = mib(val($0))
        else if (t == "current_ecc") ecc[gpu] = val($0)
        else if (t == "current_mig") migmode[gpu] = val($0)
      }
    }
    BEGIN { gpu = -1; n = 0 }
    END {
      print "# HELP plinth_gpu_driver_info NVIDIA driver and the CUDA version it supports (nvidia-smi)."
      print "# TYPE plinth_gpu_driver_info gauge"
      printf "plinth_gpu_driver_info{node=\"%s\",driver_version=\"%s\",cuda_version=\"%s\"} 1\n", node, driver, cuda
      print "# HELP plinth_gpus NVIDIA GPUs nvidia-smi lists."
      print "# TYPE plinth_gpus gauge"
      printf "plinth_gpus{node=\"%s\"} %d\n", node, n
      print "# HELP plinth_gpu_info One series per GPU: product, UUID, memory, ECC and MIG mode."
      print "# TYPE plinth_gpu_info gauge"
      for (g = 0; g < n; g++)
        printf "plinth_gpu_info{node=\"%s\",gpu=\"%d\",uuid=\"%s\",product=\"%s\",memory_mib=\"%s\",ecc_mode=\"%s\",mig_mode=\"%s\"} 1\n", node, g, uuid[g], product[g], memory[g], ecc[g], migmode[g]
      print "# HELP plinth_gpu_mig_devices MIG devices (compute instances) nvidia-smi lists per GPU."
      print "# TYPE plinth_gpu_mig_devices gauge"
      for (g = 0; g < n; g++) printf "plinth_gpu_mig_devices{node=\"%s\",gpu=\"%d\"} %d\n", node, g, mig_n[g]
      print "# HELP plinth_gpu_mig_device_info One series per MIG device: GPU and compute instance, SMs, memory."
      print "# TYPE plinth_gpu_mig_device_info gauge"
      for (g = 0; g < n; g++)
        for (m = 0; m < mig_n[g]; m++)
          printf "plinth_gpu_mig_device_info{node=\"%s\",gpu=\"%d\",gpu_instance=\"%s\",compute_instance=\"%s\",multiprocessors=\"%s\",memory_mib=\"%s\"} 1\n", node, g, mig_gi[g, m], mig_ci[g, m], mig_sm[g, m], mig_mem[g, m]
    }'
  mig_profiles
  nvlinks
}

# MIG GPU instances by profile: `nvidia-smi mig -lgi` rows such as
# "|   0  MIG 1g.10gb          19        9          2:1     |".
mig_profiles() {
  out=$(nvidia-smi mig -lgi 2>/dev/null) || return 0
  help plinth_gpu_mig_profile_instances "MIG GPU instances per GPU and profile (nvidia-smi mig -lgi)."
  printf '%s\n' "$out" | awk -v node="$N" '
    $1 == "|" && $3 == "MIG" && $2 ~ /^[0-9]+$/ { c[$2 "\t" $4]++ }
    END { for (k in c) { split(k, p, "\t"); printf "plinth_gpu_mig_profile_instances{node=\"%s\",gpu=\"%s\",profile=\"%s\"} %d\n", node, p[1], p[2], c[k] } }' |
    sort
}

# NVLink state per link: `nvidia-smi nvlink --status` lists "GPU 0: ..." then
# "	 Link 0: 26.562 GB/s" for an active link or "	 Link 0: <inactive>".
nvlinks() {
  out=$(nvidia-smi nvlink --status 2>/dev/null) || return 0
  help plinth_gpu_nvlink_up "1 when the NVLink link is active, 0 when inactive (nvidia-smi nvlink --status)."
  printf '%s\n' "$out" | awk -v node="$N" '
    /^GPU [0-9]+:/ { g = $2; sub(/:/, "", g); next }
    $1 == "Link" && g != "" { l = $2; sub(/:/, "", l)
      printf "plinth_gpu_nvlink_up{node=\"%s\",gpu=\"%s\",link=\"%s\"} %d\n", node, g, l, ($0 ~ /inactive/) ? 0 : 1 }'
}

services() {
  command -v systemctl >/dev/null 2>&1 || return 0
  help plinth_service_active "1 when the systemd service is active (systemctl is-active)."
  for s in nvidia-fabricmanager nvidia-imex nvidia-persistenced nvlsm dcgm-exporter auditd; do
    a=0
    [ "$(systemctl is-active "$s.service" 2>/dev/null)" = active ] && a=1
    printf 'plinth_service_active{node="%s",service="%s"} %s\n' "$N" "$s" "$a"
  done
}

modules() {
  [ -r "$root/proc/modules" ] || return 0
  help plinth_kernel_module_loaded "1 when the kernel module is loaded (/proc/modules)."
  for m in nvidia nvidia_peermem nvidia_uvm ib_umad ib_core mlx5_core; do
    a=0
    grep -q "^$m " "$root/proc/modules" && a=1
    printf 'plinth_kernel_module_loaded{node="%s",module="%s"} %s\n' "$N" "$m" "$a"
  done
}

infiniband() {
  ports=$(ls -d "$root"/sys/class/infiniband/*/ports/* 2>/dev/null) || return 0
  [ -n "$ports" ] || return 0
  help plinth_ib_port_info "One series per RDMA port: state and link layer (/sys/class/infiniband)."
  for p in $ports; do
    printf 'plinth_ib_port_info{node="%s",device="%s",port="%s",state="%s",link_layer="%s"} 1\n' "$N" \
      "$(esc "$(basename "$(dirname "$(dirname "$p")")")")" "$(esc "$(basename "$p")")" \
      "$(esc "$(sed 's/^[0-9]*: *//' "$p/state" 2>/dev/null)")" "$(esc "$(cat "$p/link_layer" 2>/dev/null)")"
  done
  help plinth_ib_port_rate_gbps "Port rate in Gb/s (/sys/class/infiniband/DEV/ports/N/rate)."
  for p in $ports; do
    rate=$(sed 's/ .*//' "$p/rate" 2>/dev/null)
    printf 'plinth_ib_port_rate_gbps{node="%s",device="%s",port="%s"} %s\n' "$N" \
      "$(esc "$(basename "$(dirname "$(dirname "$p")")")")" "$(esc "$(basename "$p")")" "${rate:-0}"
  done
}

# The dm device (dm-N) a mount source is, when it is one.
dm_of() {
  case "$1" in
    /dev/dm-*) basename "$1"; return ;;
    /dev/mapper/*)
      name=${1#/dev/mapper/}
      for d in "$root"/sys/block/dm-*; do
        [ "$(cat "$d/dm/name" 2>/dev/null)" = "$name" ] && basename "$d" && return
      done ;;
  esac
}

# The mounts that hold data (not proc, sys, tmpfs, cgroup ...): "source mountpoint fstype".
data_mounts() {
  while read -r src mnt fstype _; do
    case "$fstype" in
      proc|sysfs|devtmpfs|devpts|tmpfs|cgroup|cgroup2|securityfs|pstore|bpf|debugfs|tracefs|configfs|fusectl|mqueue|hugetlbfs|autofs|binfmt_misc|efivarfs|rpc_pipefs|nsfs|overlay|squashfs|ramfs|fuse.lxcfs|nfsd) continue ;;
    esac
    printf '%s %s %s\n' "$src" "$mnt" "$fstype"
  done < "$root/proc/mounts"
}

mounts() {
  [ -r "$root/proc/mounts" ] || return 0
  list=$(data_mounts)
  help plinth_mount_info "One series per mounted file system that holds data."
  printf '%s\n' "$list" | while read -r src mnt fstype; do
    [ -n "$mnt" ] || continue
    printf 'plinth_mount_info{node="%s",mountpoint="%s",fstype="%s",source="%s"} 1\n' "$N" "$(esc "$mnt")" \
      "$(esc "$fstype")" "$(esc "$src")"
  done
  help plinth_mount_encrypted "1 when the mount's block device is a dm-crypt mapping (LUKS), 0 otherwise."
  printf '%s\n' "$list" | while read -r src mnt _; do
    [ -n "$mnt" ] || continue
    crypt=0
    dm=$(dm_of "$src")
    if [ -n "$dm" ]; then
      case "$(cat "$root/sys/block/$dm/dm/uuid" 2>/dev/null)" in CRYPT-*) crypt=1 ;; esac
    fi
    printf 'plinth_mount_encrypted{node="%s",mountpoint="%s"} %s\n' "$N" "$(esc "$mnt")" "$crypt"
  done
}

case "${1:-}" in
  --stdout) probe; exit 0 ;;
  -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
esac
out=${1:-${PLINTH_PROBE_DIR:-/var/lib/prometheus/node-exporter}/plinth.prom}
mkdir -p "$(dirname "$out")"
tmp="$out.$$"
if probe > "$tmp"; then
  mv -f "$tmp" "$out"
else
  rm -f "$tmp"
  echo "plinth-probe: cannot write $out" >&2
  exit 1
fi
