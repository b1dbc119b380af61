#pragma once
// The instance types a cloud provider declares in its schema, read from the
// YAML file it keeps beside its code (providers/aws/instance_types.yaml):
//
//   sources:
//     aws-p5: "Amazon EC2 P5 instances, https://aws.amazon.com/ec2/instance-types/p5/"
//   instance_types:
//     - {name: p5.48xlarge, gpu: H100-80GB, gpu_count: 8, vcpus: 192, memory_gb: 2048,
//        nvswitch: true, fabric_manager: true, facts: {efa_interfaces: 32}, source: "aws-p5"}
//
// `source` names one or more `sources` keys, separated by ';' (text after a
// key, "aws-ac (16 network cards)", is a note).
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.h"
#include "engine/provider/schema.h"

namespace plinth::cloud {

/// The instance types of `text`, read strictly: unknown keys, wrong types,
/// a `source` naming no `sources` entry and duplicate names are errors that
/// name `file`:line:column.
Result<std::vector<InstanceType>> read_instance_types(const std::string& file, std::string_view text);

/// read_instance_types of a file compiled into the binary: an error there is
/// a defect of the build (the provider tests read every such file), so it
/// stops the program with the message.
std::vector<InstanceType> compiled_instance_types(const std::string& file, std::string_view text);

}  // namespace plinth::cloud
