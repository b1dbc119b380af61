#pragma once
// The built-in provider "plinth": the blueprint's logical resources (stacks,
// VLANs, fabrics, storage tiers, backups, access, monitoring). They have no
// external API here: applying one records it in state. Another provider may
// serve a section instead (the Kubernetes provider takes access.namespaces
// over when a cluster is configured); plan::diff then plans a replace.
#include "engine/provider/provider.h"

namespace plinth::logical {

/// The schema: name "plinth", the logical resource types, every logical
/// section served by default, no options of its own.
const ProviderSchema& schema();

class LogicalProvider : public Provider {
 public:
  const ProviderSchema& schema() const override { return logical::schema(); }
  Status configure(const ProviderConfig&) override { return {}; }
  /// Each resource as it is recorded: there is nothing else to look at.
  std::vector<ReadResult> read(const std::vector<Resource>& resources, const Call&) override;
  Result<Resource> create(const Resource& desired, Call&) override { return desired; }
  Result<Resource> update(const Resource&, const Resource& desired, Call&) override { return desired; }
  Status remove(const Resource&, Call&) override { return {}; }
  void stop() override {}
  void close() override {}
};

}  // namespace plinth::logical
