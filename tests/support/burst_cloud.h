#pragma once
// The burst-pool contract (docs/providers/burst-pool-contract.md) as a cloud
// takes part in its conformance suite, tests/e2e/burst_pool_conformance_test.cpp:
// CloudUnderTest is what the suite needs of a cloud (its emulator started for
// a case, the user's environment, a pool in the cloud's words, what the
// emulator holds and was asked, how to make it refuse, lose, reclaim, and the
// words its errors use); AwsCloud, GcpCloud and AzureCloud make it for
// aws-ec2-emulator, gcp-emulator and azure-emulator (burst_cloud_aws.cpp,
// burst_cloud_gcp.cpp, burst_cloud_azure.cpp). A new cloud, or a plugin
// cloud with an emulator of its own, writes one more such file and type and
// adds the type to PLINTH_BURST_CLOUDS.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/wire.h"
#include "engine/provider/resource.h"
#include "tests/support/blueprints.h"
#include "tests/support/clouds.h"
#include "tests/support/run.h"
#include "tests/support/workspace.h"

namespace plinth::test {

/// What a case asks of the cloud's emulator as it starts; each cloud turns it into its emulator's flags,
/// control calls and the user's environment.
struct CloudSetup {
  int operation_ms = 0;                ///< a create or a delete takes this long (the provider waits for it)
  bool throttled = false;              ///< the cloud throttles often and the client holds nothing back
  bool rate_limited = false;           ///< the cloud limits the request rate and the client keeps below it
  bool temporary_credentials = false;  ///< the user holds short-lived credentials (AWS: a session token)
};

/// A pool as a case wants it; CloudUnderTest::pool writes it in the cloud's words.
struct PoolShape {
  int desired = 3;
  int zones = 0;          ///< 1 or 2: the first zones of CloudUnderTest::zones(); 0: where the cloud puts a pool
  bool fallback = false;  ///< CloudUnderTest::instance_types()[1] to fall back on
  bool spot = true;
  bool own_settings = false;  ///< the cloud's own settings too, which check_pool checks (AWS placement groups...)
  std::string extra;          ///< more keys in the cloud's words, "    key: value\n" each
};

/// One instance as the cloud's emulator shows it, in the contract's words.
struct CloudInstance {
  std::string id;       ///< what the state records as computed.id
  std::string uid;      ///< an identity no other instance ever has (Azure names a VM again after its address)
  std::string name;     ///< the name two instances never share at once (AWS: the instance id)
  std::string address;  ///< its plinth address tag (or label, or metadata item)
  std::string lineage;  ///< its state lineage tag
  std::string type;
  std::string zone;
  bool spot = false;
  bool active = false;    ///< holds the pool (AWS: pending or running, GCP: not TERMINATED, Azure: running)
  std::string user_data;  ///< decoded
  Json raw;               ///< as the emulator shows it
};

/// A call of the contract, named in the cloud's request log by CloudUnderTest::call.
enum class Call { list, create, update, remove };

/// A spot instance the cloud took back.
struct Reclaimed {
  /// What refresh says after "  - ADDRESS: ", in order (the first right after it).
  std::vector<std::string> gone;
  /// The call that starts the same instance again; "": the next apply makes a new one.
  std::string restart_call;
};

/// What the cloud answers a user whose credentials are wrong.
struct Refusal {
  std::string words;            ///< the cloud's error, as the output shows it
  bool api_sees_each = false;   ///< the cloud's API checks each request (one create per instance reaches it)
  int token_requests = 0;       ///< token requests the run makes (one: the refusal is remembered for the run)
};

/// Instances made for a state's lineage outside this run, the state recording them.
struct Population {
  int instances = 0;
  int per_page = 0;  ///< instances a list request answers
};

/// A blueprint of blueprints/examples/ whose pool of this cloud applies against its emulator.
struct ExampleBlueprint {
  std::string file;                       ///< relative to the repository root
  std::vector<std::string> args;          ///< after the file (-target ...)
  size_t instances = 0;
  std::map<std::string, int> zones;       ///< instances per zone; empty: not checked
  std::function<void(const std::vector<CloudInstance>&)> check;  ///< what else the cloud promises of them
};

/// A pool setting written wrong, for `plinth validate`.
struct Misspelling {
  std::string lines;       ///< pool keys: one unknown key, then a nested value of the wrong type
  std::string wrong;       ///< the unknown key
  std::string suggestion;  ///< the key `did you mean` names
  std::string bad_value;   ///< the value of the wrong type
};

/// A setting of the cloud's own that changes in place, and what it changes.
struct InPlaceSetting {
  std::string lines;  ///< pool keys; "" for none
  std::function<void(const std::vector<CloudInstance>&, const std::string& lineage)> check;
};

class CloudUnderTest {
 public:
  virtual ~CloudUnderTest() = default;

  // --- Who the cloud is (no emulator needed).
  virtual std::string provider() const = 0;       ///< "aws"
  virtual std::string resource_type() const = 0;  ///< "aws.instance"
  /// TYPE.POOL[INDEX]
  std::string address(int index, const std::string& pool = "gpu") const;
  virtual std::vector<std::string> zones() const = 0;           ///< two zones of the pools' region
  virtual std::vector<std::string> instance_types() const = 0;  ///< the pools' type and one to fall back on
  virtual BurstPool pool(const PoolShape& shape) const = 0;
  virtual Misspelling misspelling() const = 0;

  // --- Its emulator and the user's side.
  /// Starts the emulator for `setup`; every hook below needs it.
  virtual void start(const CloudSetup& setup = {}) = 0;
  virtual CloudEmulator& emulator() = 0;
  /// The environment of a user pointing plinth at the emulator.
  virtual std::map<std::string, std::string> env() = 0;
  /// apply --parallelism
  virtual std::string parallelism() const = 0;

  // --- What the emulator holds.
  /// Every instance it shows.
  virtual std::vector<CloudInstance> instances() = 0;
  /// Those that hold the pool.
  std::vector<CloudInstance> active();
  /// Whether removed instances stay listed a while (EC2's terminated ones).
  virtual bool keeps_removed() const = 0;
  /// What the cloud makes with instances matches the instances (AWS placement groups, GCP boot disks,
  /// Azure NICs), none left behind.
  virtual void check_companions() = 0;
  /// What the cloud promises of the instances of pool(own_settings) besides the contract's.
  virtual void check_pool(const std::vector<CloudInstance>& active, const Workspace& ws, const RunResult& apply) = 0;

  // --- What it was asked.
  /// The names of Call::list, create, update and remove in the cloud's request log, in that order.
  virtual std::vector<std::string> calls() const = 0;
  std::string call(Call c) const;
  /// The name of the request of one request-log line; "" for the emulator's control requests.
  virtual std::string call_of(const Json& line) const = 0;
  /// +1 when the line made an instance, -1 when it removed one, else 0.
  virtual int launched(const Json& line) const = 0;
  /// The token requests one run makes (0: the cloud signs each request) and their name.
  virtual int tokens_per_run() const = 0;
  virtual std::string token_call() const = 0;
  /// Requests answered "slow down" (of `c`), and requests whose answer was lost.
  virtual int throttled() = 0;
  virtual int throttled(Call c) = 0;
  virtual int lost() = 0;
  /// The calls CloudSetup::throttled is sure to throttle.
  virtual std::vector<Call> throttled_calls() const = 0;

  /// How many lines the request log has now.
  size_t log_mark();
  /// The requests logged after `mark`, by name (control requests left out).
  std::map<std::string, int> requests_since(size_t mark);
  /// Requests of `c` (of `name`) so far.
  int requests(Call c);
  int requests(const std::string& name);
  /// The instance count after each request that made or removed one, from `start` instances at `mark`.
  std::vector<int> pool_sizes_since(size_t mark, int start);
  int token_requests();

  // --- What it is made to do.
  /// Room for `limit` (null: no limit) instances of `type` in `zone` ("": each zone).
  virtual void capacity(const std::string& type, const std::string& zone, Json limit) = 0;
  /// The answers to the next `n` requests of `c` are lost after the cloud carried them out.
  virtual void lose_answers(Call c, int n) = 0;
  /// The ways the cloud takes spot instances back, the pool keys each needs, and taking `victim` back.
  virtual std::vector<std::string> reclaim_kinds() const = 0;
  virtual std::string reclaim_setting(const std::string& kind) const = 0;
  virtual Reclaimed reclaim(const Resource& victim, const std::string& kind) = 0;
  /// Makes `ws`'s credentials wrong.
  virtual Refusal spoil_credentials(Workspace& ws) = 0;
  /// The kinds of credentials a user may hold, giving `ws` one, and what must never be shown of them.
  virtual std::vector<std::string> credential_kinds() const = 0;
  virtual void use_credentials(Workspace& ws, const std::string& kind) = 0;
  virtual std::vector<std::string> secrets() = 0;
  /// Many instances with `ws`'s state recording them, as after a large apply.
  virtual Population populate(Workspace& ws) = 0;
  /// An instance with `ws`'s lineage at `address` that the state does not record (its computed.id).
  virtual std::string make_stray(Workspace& ws, const std::string& address) = 0;
  virtual ExampleBlueprint example() = 0;
  virtual InPlaceSetting in_place_setting() const = 0;

  // --- The cloud's words.
  /// The error code of a refusal for capacity in a zone.
  virtual std::string capacity_code() const = 0;
  /// What the output says of an instance that found no capacity for `type` in `zone`, after "ADDRESS: ".
  virtual std::string no_capacity(const std::string& type, const std::string& zone) const = 0;
  /// The hint that follows when the pool had one place to try.
  virtual std::string fallback_hint() const = 0;
  /// What the output says of a throttled request.
  virtual std::string throttle_words() const = 0;
};

/// A Workspace whose runs talk to `cloud`'s emulator with the user's environment.
class CloudWorkspace : public Workspace {
 public:
  explicit CloudWorkspace(CloudUnderTest& cloud);
};

/// The clouds of the suite, a type each for its TEMPLATE_TEST_CASEs; make() gives the cloud's CloudUnderTest, its
/// emulator not started yet.
struct AwsCloud {  ///< aws-ec2-emulator: EC2 spot p5 pools (docs/providers/aws.md)
  static std::unique_ptr<CloudUnderTest> make();
};
struct GcpCloud {  ///< gcp-emulator: Compute Engine SPOT a3 pools (docs/providers/gcp.md)
  static std::unique_ptr<CloudUnderTest> make();
};
struct AzureCloud {  ///< azure-emulator: Spot ND-series pools with their NICs (docs/providers/azure.md)
  static std::unique_ptr<CloudUnderTest> make();
};

}  // namespace plinth::test

/// The clouds the conformance suite runs each case for: the types of its TEMPLATE_TEST_CASEs, named in
/// plinth::test (the test names end in " - AwsCloud" and so on).
#define PLINTH_BURST_CLOUDS AwsCloud, GcpCloud, AzureCloud
