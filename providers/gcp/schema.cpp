#include "providers/gcp/schema.h"

#include "providers/common/cloud_instance.h"

namespace plinth::gcp {

const ProviderSchema& schema() {
  static const ProviderSchema s = [] {
    ProviderSchema p;
    p.name = "gcp";
    p.version = PLINTH_VERSION;
    p.description = "Google Compute Engine instances for GPU burst pools.";
    p.docs = "docs/providers/gcp.md";
    p.resource_types = {{"gcp.instance", "gcp",
                         "One Compute Engine instance of a GCP burst pool (the pool's `desired` count).",
                         cloud::instance_attributes()}};
    p.sections = {{"burst_pools", "gcp.instance", false, {}}};
    return p;
  }();
  return s;
}

}  // namespace plinth::gcp
