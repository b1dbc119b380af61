#include "providers/azure/schema.h"

#include "providers/common/cloud_instance.h"

namespace plinth::azure {

const ProviderSchema& schema() {
  static const ProviderSchema s = [] {
    ProviderSchema p;
    p.name = "azure";
    p.version = PLINTH_VERSION;
    p.description = "Azure virtual machines for GPU burst pools.";
    p.docs = "docs/providers/azure.md";
    auto attrs = cloud::instance_attributes();
    attrs.push_back({"resource_group", true, false, "Azure resource group the VM lives in.", ValueType::String});
    p.resource_types = {{"azure.vm", "azure", "One virtual machine of an Azure burst pool (the pool's `desired` count).",
                         std::move(attrs)}};
    p.sections = {{"burst_pools",
                   "azure.vm",
                   false,
                   {{"resource_group", ValueType::String, false, {}, "Azure resource group the VMs are created in."}}}};
    return p;
  }();
  return s;
}

}  // namespace plinth::azure
