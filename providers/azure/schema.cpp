#include "providers/azure/schema.h"

#include "engine/core/strings.h"
#include "providers/common/cloud_instance.h"
#include "providers/common/instance_types.h"

namespace plinth::azure {

namespace {

ProviderSchema build_schema() {
  using T = ValueType;
  ProviderSchema p;
  p.name = "azure";
  p.version = PLINTH_VERSION;
  p.description = "Azure virtual machines for GPU burst pools.";
  p.docs = "docs/providers/azure.md";

  std::vector<AttributeSpec> attrs = cloud::instance_attributes();
  attrs.insert(
      attrs.end(),
      {
          force_new("resource_group", "Azure resource group the VM lives in.", T::String),
          force_new("image",
                    "Marketplace image URN PUBLISHER:OFFER:SKU:VERSION, or an image / gallery image version "
                    "resource id (/subscriptions/...).",
                    T::String),
          attr("instance_types",
               "VM sizes to fall back on, in order, when Azure answers SkuNotAvailable, AllocationFailed, "
               "ZonalAllocationFailed or a quota error (after every zone of the one before); chooses where new VMs go.",
               T::StringList),
          attr("zones", "Availability zones (\"1\", \"2\", \"3\") to try, in order, for each size; empty: regional.",
               T::StringList),
          force_new("subnet_id",
                    "Subnet resource id of the VMs' network interfaces; empty: Plinth's VNet `plinth-REGION` in the "
                    "resource group (made on first use).",
                    T::String),
          force_new("ssh_public_key", "OpenSSH public key of the admin user (required to create).", T::String),
          force_new("admin_username", "Admin user of the VM (default plinth).", T::String),
          force_new("eviction_policy", "Spot eviction: Deallocate (Azure's default) or Delete.", T::String),
          force_new("max_price", "Spot billingProfile.maxPrice in US dollars an hour; -1 (default): up to on-demand.",
                    T::Number),
          force_new("accelerated_networking", "Accelerated networking on the NIC (default true).", T::Bool),
          force_new("os_disk",
                    "OS disk: {size_gb, type, encryption_at_host, disk_encryption_set_id}; recorded as sent, so "
                    "policies can check the disk's encryption.",
                    T::Object),
      });

  ResourceType vm{"azure.vm", "azure", "One virtual machine of an Azure burst pool (the pool's `desired` count).",
                  std::move(attrs)};
  vm.create_before_destroy = true;
  vm.placement = {"instance_type", "zone"};
  p.resource_types = {std::move(vm)};

  std::vector<SettingSpec> settings = {
      {"resource_group", T::String, false, {}, "Azure resource group the VMs are created in (required to create).", {}},
      {"image", T::String, false, {}, "Image URN PUBLISHER:OFFER:SKU:VERSION or image resource id.", {}},
      {"instance_types", T::StringList, false, {}, "VM sizes to fall back on, in order.", {}},
      {"zones", T::StringList, false, {}, "Availability zones to try, in order (\"1\", \"2\", \"3\").", {}},
      {"subnet_id", T::String, false, {}, "Subnet resource id for the NICs; empty: Plinth's VNet.", {}},
      {"ssh_public_key", T::String, false, {}, "OpenSSH public key of the admin user.", {}},
      {"admin_username", T::String, false, {}, "Admin user (default plinth).", {}},
      {"eviction_policy", T::String, false, {"Deallocate", "Delete"}, "Spot eviction policy (default Deallocate).", {}},
      {"max_price", T::Number, false, {}, "Spot maximum price (USD/hour); -1: up to on-demand (default).", {}},
      {"accelerated_networking", T::Bool, false, {}, "Accelerated networking on the NIC (default true).", {}},
      {"os_disk",
       T::Object,
       false,
       {},
       "OS disk.",
       {{"size_gb", T::Int, false, {}, "Size in GiB.", {}},
        {"type",
         T::String,
         false,
         {"Premium_LRS", "PremiumV2_LRS", "StandardSSD_LRS", "Standard_LRS", "Premium_ZRS", "StandardSSD_ZRS"},
         "Managed disk type (default Premium_LRS).",
         {}},
        {"encryption_at_host", T::Bool, false, {}, "Encrypt temp disk and caches on the host.", {}},
        {"disk_encryption_set_id", T::String, false, {}, "Disk encryption set (customer-managed key) resource id.", {}}}},
  };
  p.sections = {{"burst_pools", "azure.vm", false, std::move(settings), false, "instance_types"}};
  p.instance_types = cloud::compiled_instance_types("providers/azure/instance_types.yaml", instance_types_yaml());
  // The ND VMs' virtualised PCIe hides which NIC sits by which GPU: the topology files Azure's HPC
  // images install per VM size, at the path their docs and job scripts use (Azure/azhpc-images,
  // components/setup_sku_customizations.sh: standard_nd*v4 -> ndv4, standard_nd96is*_h[1-2]00_v5 -> ndv5,
  // standard_nc96ads_a100_v4 -> ncv4, whose NVLink-bridged GPU pairs NCCL also needs a graph file for).
  for (auto& t : p.instance_types) {
    const std::string n = ascii_lower(t.name);
    if (n.starts_with("standard_nd") && n.ends_with("v4")) {
      t.nccl_topology_path = "/opt/microsoft/ndv4-topo.xml";
      t.nccl_topology_xml = std::string(ndv4_topo_xml());
    } else if (n.starts_with("standard_nd96is") && (n.ends_with("_h100_v5") || n.ends_with("_h200_v5"))) {
      t.nccl_topology_path = "/opt/microsoft/ndv5-topo.xml";
      t.nccl_topology_xml = std::string(ndv5_topo_xml());
    } else if (n == "standard_nc96ads_a100_v4") {
      t.nccl_topology_path = "/opt/microsoft/ncv4-topo.xml";
      t.nccl_topology_xml = std::string(ncv4_topo_xml());
      t.nccl_graph_path = "/opt/microsoft/ncv4-graph.xml";
      t.nccl_graph_xml = std::string(ncv4_graph_xml());
    }
  }

  p.options = {
      {"tenant_id", T::String, "", {"AZURE_TENANT_ID"}, "Microsoft Entra tenant (directory) id."},
      {"client_id", T::String, "", {"AZURE_CLIENT_ID"}, "Application (client) id of the service principal."},
      {"client_secret", T::String, "", {"AZURE_CLIENT_SECRET"}, "Client secret of the service principal.", true},
      {"client_certificate_path", T::String, "", {"AZURE_CLIENT_CERTIFICATE_PATH"},
       "PEM file with the client certificate and its private key (instead of a secret)."},
      {"federated_token_file", T::String, "", {"AZURE_FEDERATED_TOKEN_FILE"},
       "File holding an OIDC token (a CI system's, a pod's) sent as the client assertion of client_id (workload "
       "identity federation); read again for each token."},
      {"managed_identity", T::Bool, "true", {},
       "Without a secret, certificate or federated token, get tokens from the managed identity endpoint "
       "(identity_endpoint, else IMDS); client_id, when set, picks a user-assigned identity."},
      {"identity_endpoint", T::String, "", {"IDENTITY_ENDPOINT"},
       "Managed identity endpoint of App Service, Functions and Container Apps (with identity_header)."},
      {"identity_header", T::String, "", {"IDENTITY_HEADER"}, "X-IDENTITY-HEADER of identity_endpoint.", true},
      {"imds_endpoint", T::String, "", {"AZURE_POD_IDENTITY_AUTHORITY_HOST"},
       "Instance Metadata Service for managed identity tokens; empty: http://169.254.169.254."},
      {"subscription_id", T::String, "", {"AZURE_SUBSCRIPTION_ID"}, "Subscription the VMs are created in."},
      {"authority_host", T::String, "https://login.microsoftonline.com", {"AZURE_AUTHORITY_HOST"},
       "Microsoft Entra authority (sovereign clouds: https://login.microsoftonline.us, ...)."},
      {"resource_manager_endpoint", T::String, "https://management.azure.com", {"AZURE_RESOURCE_MANAGER_ENDPOINT"},
       "Azure Resource Manager endpoint (sovereign clouds: https://management.usgovcloudapi.net, ...)."},
      {"resource_manager_audience", T::String, "https://management.azure.com/", {},
       "Token audience of Resource Manager; the scope asked for is AUDIENCE/.default."},
      {"location", T::String, "", {"AZURE_LOCATION"}, "Region for pools that name none."},
      {"ca_bundle", T::String, "", {"REQUESTS_CA_BUNDLE"},
       "CA bundle (PEM) to verify Entra and Resource Manager; empty: the system store."},
      {"timeout_ms", T::Int, "30000", {}, "Longest one HTTP request may take (cut to the operation's deadline)."},
      {"connect_timeout_ms", T::Int, "10000", {}, "Longest a TCP + TLS connection may take."},
      {"poll_ms", T::Int, "5000",
       {}, "Interval between polls of a long-running operation when Azure sends no Retry-After."},
      {"max_poll_ms", T::Int, "60000", {}, "Longest wait between polls, whatever Retry-After says."},
      {"request_rates", T::Map, "reads=250:25,writes=200:10,deletes=200:10", {},
       "Client-side token buckets per subscription, BUCKET=SIZE:REFILL_PER_SECOND; BUCKET is reads, writes or "
       "deletes. Defaults: ARM's documented per-subscription limits. The x-ms-ratelimit-remaining-subscription-* "
       "headers of each answer lower a bucket when ARM has fewer tokens left."},
  };
  // Where requests and credentials go: never from a pull request's blueprint (--untrusted).
  operator_only(p.options, {"client_certificate_path", "authority_host", "resource_manager_endpoint",
                            "resource_manager_audience", "ca_bundle", "federated_token_file", "managed_identity",
                            "identity_endpoint", "imds_endpoint"});
  p.deadlines = Deadlines{std::chrono::minutes(2), std::chrono::minutes(30), std::chrono::minutes(10),
                          std::chrono::minutes(20)};
  return p;
}

}  // namespace

const ProviderSchema& schema() {
  static const ProviderSchema s = build_schema();
  return s;
}

}  // namespace plinth::azure
