#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/blueprint/blueprint.h"
#include "engine/catalog/catalog.h"
#include "engine/core/result.h"

namespace plinth::render {

/// The cloud-init files for one pool (node pool or burst pool).
struct CloudInit {
  std::string user_data;       ///< "#cloud-config" document
  std::string network_config;  ///< network config version 2 ("" when the pool has no VLANs)
  std::string hash;            ///< sha256 of user_data + network_config
  bool operator==(const CloudInit&) const = default;
};

/// Renders the pool's stack into cloud-init for its operating system
/// (Ubuntu 22.04 / 24.04 with apt, RHEL / Rocky 8 / 9 with dnf; the pool's
/// `os`, else the boot image's name, else Ubuntu 22.04) from NVIDIA's CUDA
/// repository (x86_64, or sbsa for Grace superchips):
///  - the driver with the chosen kernel module flavour (the stack's
///    `kernel_modules`, else NVIDIA's default: open from R560, and always
///    open on GPUs that run only the open modules), pinned to its version;
///  - on NVSwitch nodes (catalog: GPU and GPUs per node, or instance type)
///    nvidia-fabricmanager of exactly the driver's version, enabled; on
///    fourth-generation NVSwitch (Blackwell) also the NVLink Subnet Manager
///    and ib_umad;
///  - the CUDA toolkit pinned to what the rules validated
///    (Catalog::installed_cuda), cuda-compat when the stack asks for forward
///    compatibility and needs it, cuDNN, the NVIDIA Container Toolkit (the
///    stack's pin or the catalog default), Docker (Podman with CDI on RHEL);
///  - for node pools on an InfiniBand / RoCE fabric the RDMA stack
///    (DOCA-OFED with nvidia-peermem, or the distribution's rdma-core); for
///    burst pools on instance types with EFA interfaces the AWS EFA installer
///    (signature checked), with libfabric and the aws-ofi-nccl plugin;
///  - LUKS2 or plain XFS for the pool's NVMe tiers, and mounts for its NFS,
///    Lustre, GPFS, WEKA and BeeGFS tiers (with their transport encryption
///    where the file system has one);
///  - the MIG layout (one profile, mig-parted's all-balanced or a mix), the
///    DCGM exporter (pinned by digest), /etc/plinth/node.json;
///  - for node pools with networks, a network config v2: only the named
///    interfaces (default: the on-board eno*) bonded, RDMA rails on their
///    own, one tagged VLAN per network, VRFs, one default route.
/// GPU names are written in their catalog form, so an alias renders the same
/// bytes as the name. Deterministic: same blueprint and catalog, same bytes.
/// Errors: an unknown pool (listing the names / "did you mean"), a dangling
/// stack, a name/image that cannot be used safely in file names and
/// commands, or a combination the node could not run (named in the message).
Result<CloudInit> render_pool(const bp::Blueprint& blueprint, const std::string& pool, const catalog::Catalog& catalog);

/// What a node of `pool` is provisioned with: the document render_pool
/// writes to /etc/plinth/node.json (pool, stack, GPUs, MIG layout, Fabric
/// Manager, RDMA, storage mounts), which `plinth verify` compares with what
/// the node reports. Errors as render_pool.
Result<nlohmann::json> node_document(const bp::Blueprint& blueprint, const std::string& pool, const catalog::Catalog& catalog);

/// The probe every rendered node runs from a systemd timer
/// (engine/render/plinth-probe.sh, docs/verify.md): its facts as Prometheus
/// text for the node exporter's textfile collector.
std::string_view probe_script();

/// render_pool with catalog::default_catalog().
Result<CloudInit> render_pool(const bp::Blueprint& blueprint, const std::string& pool);

}  // namespace plinth::render
