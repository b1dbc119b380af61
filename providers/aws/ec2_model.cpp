// The part of the EC2 service model (botocore's service-2.json, API
// 2016-11-15) the aws provider speaks: six operations and only the members it
// sends or reads (parsing ignores the rest, as botocore does). Documentation
// and enums are left out so new instance types need no model change.
// tests/providers/aws/ec2_model_test.cpp checks every shape and member
// against the full model in tests/data/third_party/aws-ec2.
#include "providers/aws/ec2_model.h"

namespace plinth::aws {

const char* client_model_json() {
  return R"json({"metadata": {"apiVersion": "2016-11-15", "endpointPrefix": "ec2", "protocol": "ec2", "serviceId": "EC2", "signatureVersion": "v4", "xmlNamespace": "http://ec2.amazonaws.com/doc/2016-11-15"},
 "operations": {
  "CreatePlacementGroup": {"http": {"method": "POST", "requestUri": "/"}, "input": {"shape": "CreatePlacementGroupRequest"}, "name": "CreatePlacementGroup", "output": {"shape": "CreatePlacementGroupResult"}},
  "CreateTags": {"http": {"method": "POST", "requestUri": "/"}, "input": {"shape": "CreateTagsRequest"}, "name": "CreateTags"},
  "DeletePlacementGroup": {"http": {"method": "POST", "requestUri": "/"}, "input": {"shape": "DeletePlacementGroupRequest"}, "name": "DeletePlacementGroup"},
  "DescribeInstances": {"http": {"method": "POST", "requestUri": "/"}, "input": {"shape": "DescribeInstancesRequest"}, "name": "DescribeInstances", "output": {"shape": "DescribeInstancesResult"}},
  "RunInstances": {"http": {"method": "POST", "requestUri": "/"}, "input": {"shape": "RunInstancesRequest"}, "name": "RunInstances", "output": {"shape": "Reservation"}},
  "TerminateInstances": {"http": {"method": "POST", "requestUri": "/"}, "input": {"shape": "TerminateInstancesRequest"}, "name": "TerminateInstances", "output": {"shape": "TerminateInstancesResult"}}
 },
 "shapes": {
  "BlockDeviceMapping": {"members": {"DeviceName": {"locationName": "deviceName", "shape": "String"}, "Ebs": {"locationName": "ebs", "shape": "EbsBlockDevice"}}, "type": "structure"},
  "BlockDeviceMappingRequestList": {"member": {"locationName": "BlockDeviceMapping", "shape": "BlockDeviceMapping"}, "type": "list"},
  "Boolean": {"type": "boolean"},
  "CapacityReservationId": {"type": "string"},
  "CapacityReservationSpecification": {"members": {"CapacityReservationTarget": {"shape": "CapacityReservationTarget"}}, "type": "structure"},
  "CapacityReservationTarget": {"members": {"CapacityReservationId": {"shape": "CapacityReservationId"}}, "type": "structure"},
  "CreatePlacementGroupRequest": {"members": {"GroupName": {"locationName": "groupName", "shape": "String"}, "Strategy": {"locationName": "strategy", "shape": "PlacementStrategy"}, "TagSpecifications": {"locationName": "TagSpecification", "shape": "TagSpecificationList"}}, "type": "structure"},
  "CreatePlacementGroupResult": {"members": {"PlacementGroup": {"locationName": "placementGroup", "shape": "PlacementGroup"}}, "type": "structure"},
  "CreateTagsRequest": {"members": {"Resources": {"locationName": "ResourceId", "shape": "ResourceIdList"}, "Tags": {"locationName": "Tag", "shape": "TagList"}}, "required": ["Resources", "Tags"], "type": "structure"},
  "DateTime": {"type": "timestamp"},
  "DeletePlacementGroupRequest": {"members": {"GroupName": {"locationName": "groupName", "shape": "PlacementGroupNameWithResolver"}}, "required": ["GroupName"], "type": "structure"},
  "DescribeInstancesRequest": {"members": {"Filters": {"locationName": "Filter", "shape": "FilterList"}, "InstanceIds": {"locationName": "InstanceId", "shape": "InstanceIdStringList"}, "MaxResults": {"locationName": "maxResults", "shape": "Integer"}, "NextToken": {"locationName": "nextToken", "shape": "String"}}, "type": "structure"},
  "DescribeInstancesResult": {"members": {"NextToken": {"locationName": "nextToken", "shape": "String"}, "Reservations": {"locationName": "reservationSet", "shape": "ReservationList"}}, "type": "structure"},
  "EbsBlockDevice": {"members": {"DeleteOnTermination": {"locationName": "deleteOnTermination", "shape": "Boolean"}, "Encrypted": {"locationName": "encrypted", "shape": "Boolean"}, "KmsKeyId": {"locationName": "kmsKeyId", "shape": "String"}, "VolumeSize": {"locationName": "volumeSize", "shape": "Integer"}, "VolumeType": {"locationName": "volumeType", "shape": "VolumeType"}}, "type": "structure"},
  "Filter": {"members": {"Name": {"shape": "String"}, "Values": {"locationName": "Value", "shape": "ValueStringList"}}, "type": "structure"},
  "FilterList": {"member": {"locationName": "Filter", "shape": "Filter"}, "type": "list"},
  "IamInstanceProfileSpecification": {"members": {"Arn": {"locationName": "arn", "shape": "String"}, "Name": {"locationName": "name", "shape": "String"}}, "type": "structure"},
  "ImageId": {"type": "string"},
  "Instance": {"members": {"CapacityReservationId": {"locationName": "capacityReservationId", "shape": "String"}, "ClientToken": {"locationName": "clientToken", "shape": "String"}, "ImageId": {"locationName": "imageId", "shape": "String"}, "InstanceId": {"locationName": "instanceId", "shape": "String"}, "InstanceLifecycle": {"locationName": "instanceLifecycle", "shape": "InstanceLifecycleType"}, "InstanceType": {"locationName": "instanceType", "shape": "InstanceType"}, "KeyName": {"locationName": "keyName", "shape": "String"}, "LaunchTime": {"locationName": "launchTime", "shape": "DateTime"}, "Placement": {"locationName": "placement", "shape": "Placement"}, "PrivateIpAddress": {"locationName": "privateIpAddress", "shape": "String"}, "SpotInstanceRequestId": {"locationName": "spotInstanceRequestId", "shape": "String"}, "State": {"locationName": "instanceState", "shape": "InstanceState"}, "StateReason": {"locationName": "stateReason", "shape": "StateReason"}, "StateTransitionReason": {"locationName": "reason", "shape": "String"}, "SubnetId": {"locationName": "subnetId", "shape": "String"}, "Tags": {"locationName": "tagSet", "shape": "TagList"}, "VpcId": {"locationName": "vpcId", "shape": "String"}}, "type": "structure"},
  "InstanceId": {"type": "string"},
  "InstanceIdStringList": {"member": {"locationName": "InstanceId", "shape": "InstanceId"}, "type": "list"},
  "InstanceInterruptionBehavior": {"type": "string"},
  "InstanceLifecycleType": {"type": "string"},
  "InstanceList": {"member": {"locationName": "item", "shape": "Instance"}, "type": "list"},
  "InstanceMarketOptionsRequest": {"members": {"MarketType": {"shape": "MarketType"}, "SpotOptions": {"shape": "SpotMarketOptions"}}, "type": "structure"},
  "InstanceNetworkInterfaceSpecification": {"members": {"DeleteOnTermination": {"locationName": "deleteOnTermination", "shape": "Boolean"}, "DeviceIndex": {"locationName": "deviceIndex", "shape": "Integer"}, "Groups": {"locationName": "SecurityGroupId", "shape": "SecurityGroupIdStringList"}, "InterfaceType": {"shape": "String"}, "NetworkCardIndex": {"shape": "Integer"}, "SubnetId": {"locationName": "subnetId", "shape": "String"}}, "type": "structure"},
  "InstanceNetworkInterfaceSpecificationList": {"member": {"locationName": "item", "shape": "InstanceNetworkInterfaceSpecification"}, "type": "list"},
  "InstanceState": {"members": {"Code": {"locationName": "code", "shape": "Integer"}, "Name": {"locationName": "name", "shape": "InstanceStateName"}}, "type": "structure"},
  "InstanceStateChange": {"members": {"CurrentState": {"locationName": "currentState", "shape": "InstanceState"}, "InstanceId": {"locationName": "instanceId", "shape": "String"}, "PreviousState": {"locationName": "previousState", "shape": "InstanceState"}}, "type": "structure"},
  "InstanceStateChangeList": {"member": {"locationName": "item", "shape": "InstanceStateChange"}, "type": "list"},
  "InstanceStateName": {"type": "string"},
  "InstanceType": {"type": "string"},
  "Integer": {"type": "integer"},
  "KeyPairName": {"type": "string"},
  "MarketType": {"type": "string"},
  "Placement": {"members": {"AvailabilityZone": {"locationName": "availabilityZone", "shape": "String"}, "GroupName": {"locationName": "groupName", "shape": "PlacementGroupName"}}, "type": "structure"},
  "PlacementGroup": {"members": {"GroupId": {"locationName": "groupId", "shape": "String"}, "GroupName": {"locationName": "groupName", "shape": "String"}, "State": {"locationName": "state", "shape": "PlacementGroupState"}, "Strategy": {"locationName": "strategy", "shape": "PlacementStrategy"}}, "type": "structure"},
  "PlacementGroupName": {"type": "string"},
  "PlacementGroupNameWithResolver": {"type": "string"},
  "PlacementGroupState": {"type": "string"},
  "PlacementStrategy": {"type": "string"},
  "Reservation": {"members": {"Instances": {"locationName": "instancesSet", "shape": "InstanceList"}, "ReservationId": {"locationName": "reservationId", "shape": "String"}}, "type": "structure"},
  "ReservationList": {"member": {"locationName": "item", "shape": "Reservation"}, "type": "list"},
  "ResourceIdList": {"member": {"shape": "TaggableResourceId"}, "type": "list"},
  "ResourceType": {"type": "string"},
  "RunInstancesRequest": {"members": {"BlockDeviceMappings": {"locationName": "BlockDeviceMapping", "shape": "BlockDeviceMappingRequestList"}, "CapacityReservationSpecification": {"shape": "CapacityReservationSpecification"}, "ClientToken": {"idempotencyToken": true, "locationName": "clientToken", "shape": "String"}, "IamInstanceProfile": {"locationName": "iamInstanceProfile", "shape": "IamInstanceProfileSpecification"}, "ImageId": {"shape": "ImageId"}, "InstanceMarketOptions": {"shape": "InstanceMarketOptionsRequest"}, "InstanceType": {"shape": "InstanceType"}, "KeyName": {"shape": "KeyPairName"}, "MaxCount": {"shape": "Integer"}, "MinCount": {"shape": "Integer"}, "NetworkInterfaces": {"locationName": "networkInterface", "shape": "InstanceNetworkInterfaceSpecificationList"}, "Placement": {"shape": "Placement"}, "SecurityGroupIds": {"locationName": "SecurityGroupId", "shape": "SecurityGroupIdStringList"}, "SubnetId": {"shape": "SubnetId"}, "TagSpecifications": {"locationName": "TagSpecification", "shape": "TagSpecificationList"}, "UserData": {"shape": "RunInstancesUserData"}}, "required": ["MaxCount", "MinCount"], "type": "structure"},
  "RunInstancesUserData": {"sensitive": true, "type": "string"},
  "SecurityGroupId": {"type": "string"},
  "SecurityGroupIdStringList": {"member": {"locationName": "SecurityGroupId", "shape": "SecurityGroupId"}, "type": "list"},
  "SpotInstanceType": {"type": "string"},
  "SpotMarketOptions": {"members": {"InstanceInterruptionBehavior": {"shape": "InstanceInterruptionBehavior"}, "SpotInstanceType": {"shape": "SpotInstanceType"}}, "type": "structure"},
  "StateReason": {"members": {"Code": {"locationName": "code", "shape": "String"}, "Message": {"locationName": "message", "shape": "String"}}, "type": "structure"},
  "String": {"type": "string"},
  "SubnetId": {"type": "string"},
  "Tag": {"members": {"Key": {"locationName": "key", "shape": "String"}, "Value": {"locationName": "value", "shape": "String"}}, "type": "structure"},
  "TagList": {"member": {"locationName": "item", "shape": "Tag"}, "type": "list"},
  "TagSpecification": {"members": {"ResourceType": {"locationName": "resourceType", "shape": "ResourceType"}, "Tags": {"locationName": "Tag", "shape": "TagList"}}, "type": "structure"},
  "TagSpecificationList": {"member": {"locationName": "item", "shape": "TagSpecification"}, "type": "list"},
  "TaggableResourceId": {"type": "string"},
  "TerminateInstancesRequest": {"members": {"InstanceIds": {"locationName": "InstanceId", "shape": "InstanceIdStringList"}}, "required": ["InstanceIds"], "type": "structure"},
  "TerminateInstancesResult": {"members": {"TerminatingInstances": {"locationName": "instancesSet", "shape": "InstanceStateChangeList"}}, "type": "structure"},
  "ValueStringList": {"member": {"locationName": "item", "shape": "String"}, "type": "list"},
  "VolumeType": {"type": "string"}
 }})json";
}

const ec2::Model& client_model() {
  static const ec2::Model m = [] {
    auto r = ec2::Model::from_json(ec2::Json::parse(client_model_json()));
    if (!r) throw std::logic_error("the built-in EC2 model does not load: " + r.error().message);
    return std::move(*r);
  }();
  return m;
}

}  // namespace plinth::aws
