#include "providers/gcp/schema.h"

#include "providers/common/cloud_instance.h"
#include "providers/common/instance_types.h"

namespace plinth::gcp {

namespace {

ProviderSchema build_schema() {
  using T = ValueType;
  ProviderSchema p;
  p.name = "gcp";
  p.version = PLINTH_VERSION;
  p.description = "Google Compute Engine instances for GPU burst pools.";
  p.docs = "docs/providers/gcp.md";

  std::vector<AttributeSpec> attrs = cloud::instance_attributes();
  attrs.insert(
      attrs.end(),
      {
          force_new("image", "Boot disk image: projects/P/global/images/NAME, .../images/family/FAMILY or a full URL.",
                    T::String),
          attr("machine_types",
               "Machine types to fall back on, in order, when the zone has no capacity or quota (after every zone of "
               "the one before); chooses where new instances go.",
               T::StringList),
          attr("zones", "Zones to try, in order, for each machine type; empty: the pool's `zone`.", T::StringList),
          force_new("boot_disk", "Boot disk: {size_gb, type} (type pd-balanced, pd-ssd, hyperdisk-balanced, ...).",
                    T::Object),
          force_new("network", "VPC network of the instance's interface (name or URL); default `default`.", T::String),
          force_new("subnetwork", "Subnetwork in the pool's region (name or URL).", T::String),
          force_new("gpu_subnetworks",
                    "Subnetworks of the GPU NICs of A3 and A4 machine types, one per NIC in the pool's region (name or "
                    "URL; the network is the subnetwork's): the first `gpu_nics` of the machine type are attached, as "
                    "gVNIC (GPUDirect-TCPX/TCPXO) or MRDMA (GPUDirect RDMA).",
                    T::StringList),
          force_new("service_account", "Service account the instance runs as: {email, scopes}.", T::Object),
          attr("labels", "Labels of the instance besides Plinth's own (plinth-lineage, plinth-pool, ...).", T::Map),
          force_new("termination_action",
                    "What GCP does to a preempted SPOT instance: DELETE (default) or STOP; either way Plinth "
                    "creates it again.",
                    T::String),
      });

  ResourceType instance{"gcp.instance", "gcp",
                        "One Compute Engine instance of a GCP burst pool (the pool's `desired` count).",
                        std::move(attrs)};
  instance.create_before_destroy = true;
  instance.placement = {"instance_type", "zone"};
  p.resource_types = {std::move(instance)};

  std::vector<SettingSpec> settings = {
      {"image", T::String, false, {}, "Boot disk image (projects/P/global/images/family/F); required to create.", {}},
      {"machine_types", T::StringList, false, {}, "Machine types to fall back on, in order.", {}},
      {"zones", T::StringList, false, {}, "Zones to try, in order.", {}},
      {"boot_disk",
       T::Object,
       false,
       {},
       "Boot disk.",
       {{"size_gb", T::Int, false, {}, "Size in GB (10-65536).", {}},
        {"type", T::String, false, {}, "Disk type (default pd-balanced).", {}}}},
      {"network", T::String, false, {}, "VPC network (name or URL).", {}},
      {"subnetwork", T::String, false, {}, "Subnetwork in the pool's region (name or URL).", {}},
      {"gpu_subnetworks",
       T::StringList,
       false,
       {},
       "One subnetwork per GPU NIC (A3 High: 4, A3 Mega, A3 Ultra, A4: 8), each on its own VPC network for gVNIC.",
       {}},
      {"service_account",
       T::Object,
       false,
       {},
       "Service account of the instance.",
       {{"email", T::String, false, {}, "Its email, or `default`.", {}},
        {"scopes", T::StringList, false, {}, "OAuth scopes (default cloud-platform).", {}}}},
      {"labels", T::Map, false, {}, "More labels of the instances.", {}},
      {"termination_action", T::String, false, {"DELETE", "STOP"}, "What GCP does when it preempts a SPOT VM.", {}},
  };
  p.sections = {{"burst_pools", "gcp.instance", false, std::move(settings), false, "machine_types"}};
  p.sections[0].gpu_nic_setting = "gpu_subnetworks";
  p.instance_types = cloud::compiled_instance_types("providers/gcp/instance_types.yaml", instance_types_yaml());

  p.options = {
      {"project",
       T::String,
       "",
       {"GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"},
       "Project the instances are in; empty: the key file's project_id."},
      {"credentials",
       T::String,
       "",
       {"GOOGLE_APPLICATION_CREDENTIALS"},
       "Credentials file (JSON): a service-account key, an external_account (workload identity federation) or an "
       "authorized_user; empty: gcloud's application default credentials, else the metadata server."},
      {"metadata", T::Bool, "true", {},
       "Without a credentials file or access token, get tokens from the metadata server (GCE, GKE)."},
      {"metadata_host", T::String, "", {"GCE_METADATA_HOST"},
       "Metadata server host[:port]; empty: metadata.google.internal."},
      {"access_token",
       T::String,
       "",
       {"GOOGLE_OAUTH_ACCESS_TOKEN"},
       "An OAuth 2.0 access token to use instead of a key file (CI with workload identity federation).",
       true},
      {"token_uri",
       T::String,
       "",
       {},
       "Token endpoint for the key file's assertions; empty: the key file's token_uri."},
      {"endpoint",
       T::String,
       "",
       {"CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE"},
       "Compute API root; empty: https://compute.googleapis.com/compute/v1/."},
      {"ca_bundle",
       T::String,
       "",
       {"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE"},
       "CA bundle (PEM) to verify the endpoints; empty: the system store."},
      {"timeout_ms", T::Int, "30000", {}, "Longest one HTTP request may take (cut to the operation's deadline)."},
      {"connect_timeout_ms", T::Int, "10000", {}, "Longest a TCP + TLS connection may take."},
      {"poll_ms",
       T::Int,
       "1000",
       {},
       "First interval between zoneOperations.get polls; it doubles up to 10 times that (at most 10 s)."},
      {"wait", T::Bool, "true", {}, "Wait for insert and delete operations to be DONE."},
      {"page_size", T::Int, "500", {}, "aggregatedList maxResults (1-500): instances per page of a refresh."},
      {"requests_per_second",
       T::Number,
       "20",
       {},
       "Client-side token bucket over every Compute call of the project (0: none), under the API's per-minute rate "
       "quotas."},
      {"request_burst", T::Int, "50", {}, "Calls the client-side bucket lets through at once."},
  };
  // Where requests and credentials go: never from a pull request's blueprint (--untrusted).
  operator_only(p.options, {"credentials", "token_uri", "endpoint", "ca_bundle", "metadata", "metadata_host"});
  p.deadlines =
      Deadlines{std::chrono::minutes(2), std::chrono::minutes(20), std::chrono::minutes(10), std::chrono::minutes(15)};
  return p;
}

}  // namespace

const ProviderSchema& schema() {
  static const ProviderSchema s = build_schema();
  return s;
}

}  // namespace plinth::gcp
