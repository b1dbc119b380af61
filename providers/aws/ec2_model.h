#pragma once
// The EC2 service model the aws provider is built with.
#include "providers/aws/ec2_protocol.h"

namespace plinth::aws {

/// The operations and members the provider uses (RunInstances,
/// DescribeInstances, TerminateInstances, CreateTags, CreatePlacementGroup,
/// DeletePlacementGroup), a subset of botocore's EC2 model, as JSON text.
const char* client_model_json();
/// client_model_json() loaded once.
const ec2::Model& client_model();

}  // namespace plinth::aws
