#include "providers/aws/schema.h"

#include "providers/common/cloud_instance.h"

namespace plinth::aws {

const ProviderSchema& schema() {
  static const ProviderSchema s = [] {
    ProviderSchema p;
    p.name = "aws";
    p.version = PLINTH_VERSION;
    p.description = "AWS EC2 instances for GPU burst pools.";
    p.docs = "docs/providers/aws.md";
    p.resource_types = {{"aws.instance", "aws", "One EC2 instance of an AWS burst pool (the pool's `desired` count).",
                         cloud::instance_attributes()}};
    p.sections = {{"burst_pools", "aws.instance", false, {}}};
    return p;
  }();
  return s;
}

}  // namespace plinth::aws
