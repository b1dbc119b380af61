#include "providers/aws/schema.h"

#include "providers/common/cloud_instance.h"
#include "providers/common/instance_types.h"

namespace plinth::aws {

namespace {

ProviderSchema build_schema() {
  using T = ValueType;
  ProviderSchema p;
  p.name = "aws";
  p.version = PLINTH_VERSION;
  p.description = "AWS EC2 instances for GPU burst pools.";
  p.docs = "docs/providers/aws.md";

  std::vector<AttributeSpec> attrs = cloud::instance_attributes();
  attrs.insert(
      attrs.end(),
      {
          force_new("image", "AMI id the instance boots (ami-...).", T::String),
          attr("instance_types",
               "Instance types to fall back on, in order, when EC2 answers InsufficientInstanceCapacity (after every "
               "zone of the one before); chooses where new instances go.",
               T::StringList),
          attr("zones", "Availability zones to try, in order, for each instance type; empty: EC2 picks.",
               T::StringList),
          attr("subnets", "Subnet ids to launch into, in order (one per zone); used instead of `zones` when set.",
               T::StringList),
          force_new("security_groups", "Security group ids of the instance's network interfaces.", T::StringList),
          force_new("iam_instance_profile", "IAM instance profile, by name or ARN.", T::String),
          force_new("key_name", "EC2 key pair for SSH; empty for none.", T::String),
          force_new("root_volume",
                    "Root EBS volume: {size_gb, type, encrypted, kms_key_id} (the encryption policies read it).",
                    T::Object),
          force_new("placement_group",
                    "Launch into a cluster placement group per zone that Plinth creates with the pool and deletes "
                    "with its last instance.",
                    T::Bool),
          force_new("capacity",
                    "Target an existing capacity reservation ({reservation: cr-...}) or Capacity Block "
                    "({capacity_block: cr-...}).",
                    T::Object),
          attr("efa_interfaces",
               "EFA interfaces per instance type the pool may launch, from the facts of providers/aws/instance_types.yaml "
               "(p5.48xlarge 32, p4d.24xlarge 4, ...); set by Plinth.",
               T::Map),
      });

  ResourceType instance{"aws.instance", "aws", "One EC2 instance of an AWS burst pool (the pool's `desired` count).",
                        std::move(attrs)};
  instance.create_before_destroy = true;
  instance.placement = {"instance_type", "zone"};
  p.resource_types = {std::move(instance)};

  std::vector<SettingSpec> settings = {
      {"image", T::String, false, {}, "AMI id to boot (ami-...); required to create instances.", {}},
      {"instance_types", T::StringList, false, {}, "Instance types to fall back on, in order.", {}},
      {"zones", T::StringList, false, {}, "Availability zones to try, in order.", {}},
      {"subnets", T::StringList, false, {}, "Subnet ids to try, in order (instead of zones).", {}},
      {"security_groups", T::StringList, false, {}, "Security group ids.", {}},
      {"iam_instance_profile", T::String, false, {}, "IAM instance profile name or ARN.", {}},
      {"key_name", T::String, false, {}, "EC2 key pair name.", {}},
      {"root_volume",
       T::Object,
       false,
       {},
       "Root EBS volume.",
       {{"size_gb", T::Int, false, {}, "Size in GiB.", {}},
        {"type", T::String, false, {"gp3", "gp2", "io1", "io2"}, "EBS volume type (default gp3).", {}},
        {"encrypted", T::Bool, false, {}, "Encrypt the volume.", {}},
        {"kms_key_id", T::String, false, {}, "KMS key (id or ARN) for the encryption.", {}}}},
      {"placement_group", T::Bool, false, {}, "Launch into a cluster placement group (one per zone).", {}},
      {"capacity",
       T::Object,
       false,
       {},
       "Capacity to launch into.",
       {{"reservation", T::String, false, {}, "Capacity reservation id (cr-...).", {}},
        {"capacity_block", T::String, false, {}, "Capacity Block reservation id (cr-...).", {}}}},
  };
  p.sections = {{"burst_pools", "aws.instance", false, std::move(settings), false, "instance_types"}};
  p.sections[0].zone_settings = {"zones", "subnets"};
  p.sections[0].one_zone_settings = {
      {"placement_group",
       "a cluster placement group lives in one Availability Zone, so each zone gets its own group and NCCL (EFA) "
       "traffic between them leaves the low-latency network"}};
  p.instance_types = cloud::compiled_instance_types("providers/aws/instance_types.yaml", instance_types_yaml());

  p.options = {
      {"region", T::String, "", {"AWS_REGION", "AWS_DEFAULT_REGION"}, "Region for pools that name none."},
      {"access_key_id", T::String, "", {"AWS_ACCESS_KEY_ID"}, "Access key id; else the shared credentials file."},
      {"secret_access_key", T::String, "", {"AWS_SECRET_ACCESS_KEY"}, "Secret access key.", true},
      {"session_token", T::String, "", {"AWS_SESSION_TOKEN"}, "Session token of temporary credentials.", true},
      {"profile", T::String, "default", {"AWS_PROFILE"}, "Profile of the shared credentials and config files."},
      {"shared_credentials_file", T::String, "", {"AWS_SHARED_CREDENTIALS_FILE"},
       "Shared credentials file; empty: ~/.aws/credentials."},
      {"config_file", T::String, "", {"AWS_CONFIG_FILE"}, "Shared config file; empty: ~/.aws/config."},
      {"web_identity_token_file", T::String, "", {"AWS_WEB_IDENTITY_TOKEN_FILE"},
       "File holding an OIDC token (a CI system's, a pod's) exchanged for role_arn's credentials with STS "
       "AssumeRoleWithWebIdentity; read again at each refresh."},
      {"role_arn", T::String, "", {"AWS_ROLE_ARN"}, "Role the web identity token assumes."},
      {"role_session_name", T::String, "", {"AWS_ROLE_SESSION_NAME"},
       "Session name of assumed roles; empty: plinth-<unix time>."},
      {"sts_endpoint", T::String, "", {"AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL"},
       "STS endpoint URL; empty: https://sts.REGION.amazonaws.com."},
      {"sso_endpoint", T::String, "", {"AWS_ENDPOINT_URL_SSO", "AWS_ENDPOINT_URL"},
       "IAM Identity Center portal URL (GetRoleCredentials); empty: https://portal.sso.SSO_REGION.amazonaws.com."},
      {"container_credentials_relative_uri", T::String, "", {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"},
       "Path of the container credentials endpoint at http://169.254.170.2 (ECS tasks)."},
      {"container_credentials_full_uri", T::String, "", {"AWS_CONTAINER_CREDENTIALS_FULL_URI"},
       "URL of the container credentials endpoint (EKS Pod Identity); plain http only to loopback or the "
       "link-local credential addresses."},
      {"container_authorization_token", T::String, "", {"AWS_CONTAINER_AUTHORIZATION_TOKEN"},
       "Authorization header for the container credentials endpoint.", true},
      {"container_authorization_token_file", T::String, "", {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"},
       "File holding the container endpoint's authorization token; read again at each refresh."},
      {"metadata_endpoint", T::String, "", {"AWS_EC2_METADATA_SERVICE_ENDPOINT"},
       "Instance metadata service (IMDSv2), the chain's last source; empty: http://169.254.169.254."},
      {"metadata_disabled", T::Bool, "false", {"AWS_EC2_METADATA_DISABLED"},
       "Do not ask the instance metadata service for credentials."},
      {"endpoint", T::String, "", {"AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL"},
       "EC2 endpoint URL; empty: https://ec2.REGION.amazonaws.com."},
      {"ca_bundle", T::String, "", {"AWS_CA_BUNDLE"}, "CA bundle (PEM) to verify the endpoint; empty: the system store."},
      {"timeout_ms", T::Int, "30000", {}, "Longest one HTTP request may take (cut to the operation's deadline)."},
      {"connect_timeout_ms", T::Int, "10000", {}, "Longest a TCP + TLS connection may take."},
      {"poll_ms", T::Int, "2000", {}, "Interval between DescribeInstances polls while an instance starts or stops."},
      {"wait", T::Bool, "true", {}, "Wait for created instances to be running and removed ones terminated."},
      {"page_size", T::Int, "200", {}, "DescribeInstances MaxResults (5-1000): instances per page of a refresh."},
      {"request_rates", T::Map, "mutating=200:5,non-mutating=100:20", {},
       "Client-side token buckets per action, BUCKET=SIZE:REFILL_PER_SECOND; BUCKET is mutating, non-mutating or an "
       "action name (RunInstances=...). Defaults: AWS's documented EC2 request-rate buckets."},
  };
  // Where requests and credentials go: never from a pull request's blueprint (--untrusted).
  operator_only(p.options, {"profile", "shared_credentials_file", "config_file", "endpoint", "ca_bundle",
                            "web_identity_token_file", "role_arn", "sts_endpoint", "sso_endpoint", "container_credentials_relative_uri",
                            "container_credentials_full_uri", "container_authorization_token_file",
                            "metadata_endpoint", "metadata_disabled"});
  p.deadlines = Deadlines{std::chrono::minutes(2), std::chrono::minutes(20), std::chrono::minutes(10),
                          std::chrono::minutes(15)};
  return p;
}

}  // namespace

const ProviderSchema& schema() {
  static const ProviderSchema s = build_schema();
  return s;
}

}  // namespace plinth::aws
