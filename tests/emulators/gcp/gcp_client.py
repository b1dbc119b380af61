"""Drives gcp-emulator with Google's own Python client (Debian's
python3-googleapi 1.7 and python3-google-auth 1.5 with google-auth-httplib2).

usage: /usr/bin/python3 gcp_client.py SCENARIO EMULATOR_URL KEY_DIR DISCOVERY_JSON

The client is built the way a user builds it: googleapiclient's
build_from_document with the compute.v1 discovery document (its rootUrl pointed
at the emulator; this client version ignores build's base argument), an
httplib2.Http that trusts the emulator's test CA, and
google.oauth2.service_account.Credentials from the emulator's key file (whose
token_uri is the emulator) through google_auth_httplib2.AuthorizedHttp.

Each scenario prints one JSON object of what the client saw; the C++ test
(gcp_emulator_test.cpp) asserts on it. A scenario never swallows an
unexpected exception: the script then exits non-zero with the traceback.
"""
import datetime
import json
import sys
import uuid

import google.auth._helpers
import google.auth.exceptions
import google_auth_httplib2
import httplib2
from google.oauth2 import service_account
from googleapiclient import discovery
from googleapiclient import errors

SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
PROJECT = "plinth-test"

scenario, emulator, key_dir, discovery_path = sys.argv[1:5]
ca = key_dir + "/ca.pem"


def plain_http():
    return httplib2.Http(ca_certs=ca, proxy_info=None, timeout=30)


def credentials(key="service-account.json", scopes=SCOPES):
    return service_account.Credentials.from_service_account_file(key_dir + "/" + key, scopes=scopes)


def compute(creds=None, http=None):
    doc = json.load(open(discovery_path))
    doc["rootUrl"] = emulator + "/"
    doc["baseUrl"] = emulator + "/" + doc["servicePath"]
    if http is None:
        http = google_auth_httplib2.AuthorizedHttp(creds or credentials(), http=plain_http())
    return discovery.build_from_document(doc, http=http)


def control(path, body=None):
    h = plain_http()
    method = "POST" if body is not None else "GET"
    resp, content = h.request(emulator + "/__emulator/" + path, method,
                              body=json.dumps(body) if body is not None else None,
                              headers={"content-type": "application/json"})
    if resp.status != 200:
        raise RuntimeError("control %s answered %s: %s" % (path, resp.status, content))
    return json.loads(content)


def http_error(e):
    """What an HttpError says: status, Google's reason, the message."""
    data = json.loads(e.content.decode("utf-8"))
    err = data["error"]
    return {"status": e.resp.status, "reason": err["errors"][0]["reason"], "message": err["message"],
            "domain": err["errors"][0].get("domain"), "str": str(e)}


def expect_http_error(request, **kw):
    try:
        request.execute(**kw)
    except errors.HttpError as e:
        return http_error(e)
    raise AssertionError("expected an HttpError")


def gpu_instance(name, zone, machine="a3-highgpu-8g", spot=True, labels=None, action="STOP", **extra):
    body = {
        "name": name,
        "machineType": "zones/%s/machineTypes/%s" % (zone, machine),
        "disks": [{"boot": True, "autoDelete": True,
                   "initializeParams": {"sourceImage": "projects/ubuntu-os-accelerator-images/global/images/family/"
                                                       "ubuntu-accelerator-2204-amd64-with-nvidia-550",
                                        "diskSizeGb": "200",
                                        "diskType": "zones/%s/diskTypes/pd-ssd" % zone}}],
        "networkInterfaces": [{"network": "global/networks/default",
                               "accessConfigs": [{"type": "ONE_TO_ONE_NAT", "name": "External NAT"}]}],
        "serviceAccounts": [{"email": "default", "scopes": SCOPES}],
        "labels": labels or {"plinth-pool": "gcp-a3", "plinth-lineage": "l-1234"},
        "metadata": {"items": [{"key": "user-data", "value": "#cloud-config\nruncmd: [nvidia-smi]\n"}]},
        "scheduling": {"onHostMaintenance": "TERMINATE", "automaticRestart": False},
    }
    if spot:
        body["scheduling"].update({"provisioningModel": "SPOT", "instanceTerminationAction": action})
    body.update(extra)
    return body


def wait(svc, op):
    """zoneOperations.wait until DONE, as client code does."""
    zone = op["zone"].rsplit("/", 1)[1]
    while op["status"] != "DONE":
        op = svc.zoneOperations().wait(project=PROJECT, zone=zone, operation=op["name"]).execute()
    return op


def scenario_lifecycle():
    """Run with --operation-ms 60000: the emulator's clock only moves when the
    scenario moves it (POST /__emulator/clock), so every state is seen."""
    svc = compute()
    zone = "us-central1-a"
    get = lambda: svc.instances().get(project=PROJECT, zone=zone, instance="gpu-0").execute()
    rid = str(uuid.uuid4())
    body = gpu_instance("gpu-0", zone)
    first = svc.instances().insert(project=PROJECT, zone=zone, body=body, requestId=rid).execute()
    again = svc.instances().insert(project=PROJECT, zone=zone, body=body, requestId=rid).execute()
    provisioning = get()["status"]
    control("clock", {"advanceMs": 20000})
    running = svc.zoneOperations().get(project=PROJECT, zone=zone, operation=first["name"]).execute()
    staging = get()["status"]
    control("clock", {"advanceMs": 40000})
    done = wait(svc, first)
    replay = svc.instances().insert(project=PROJECT, zone=zone, body=body, requestId=rid).execute()
    inst = get()
    listed = svc.instances().list(project=PROJECT, zone=zone,
                                  filter='labels.plinth-pool = "gcp-a3"').execute()
    other = svc.instances().list(project=PROJECT, zone=zone, filter='labels.plinth-pool = "other"').execute()
    drid = str(uuid.uuid4())
    deleting = svc.instances().delete(project=PROJECT, zone=zone, instance="gpu-0", requestId=drid).execute()
    stopping = get()["status"]
    control("clock", {"advanceMs": 60000})
    deleted = wait(svc, deleting)
    delete_replay = svc.instances().delete(project=PROJECT, zone=zone, instance="gpu-0", requestId=drid).execute()
    gone = expect_http_error(svc.instances().get(project=PROJECT, zone=zone, instance="gpu-0"))
    return {"first": first, "again": again, "running": running, "done": done, "replay": replay, "instance": inst,
            "statuses": [provisioning, staging, inst["status"], stopping],
            "listed": [i["name"] for i in listed.get("items", [])], "other": other, "deleting": deleting,
            "deleted": deleted, "delete_replay": delete_replay["name"], "gone": gone}


def scenario_paging():
    svc = compute()
    zones = ["us-central1-a", "us-central1-b"]
    names = []
    for i in range(7):
        zone = zones[i % 2]
        pool = "train" if i < 5 else "serve"
        body = gpu_instance("node-%d" % i, zone, machine="g2-standard-4", spot=False,
                            labels={"plinth-pool": pool, "plinth-lineage": "l-1"})
        wait(svc, svc.instances().insert(project=PROJECT, zone=zone, body=body,
                                         requestId=str(uuid.uuid4())).execute())
        names.append(body["name"])
    # instances.list with list_next, three to a page
    pages, seen = 0, []
    req = svc.instances().list(project=PROJECT, zone="us-central1-a", maxResults=3)
    while req is not None:
        resp = req.execute()
        pages += 1
        seen += [i["name"] for i in resp.get("items", [])]
        req = svc.instances().list_next(req, resp)
    # aggregatedList across zones, filtered by label, two to a page
    agg_pages, agg_seen, scopes = 0, [], set()
    req = svc.instances().aggregatedList(project=PROJECT, filter='labels.plinth-pool = "train"', maxResults=2)
    while req is not None:
        resp = req.execute()
        agg_pages += 1
        for scope, part in resp["items"].items():
            scopes.add(scope)
            agg_seen += [(scope, i["name"]) for i in part.get("instances", [])]
        req = svc.instances().aggregatedList_next(req, resp)
    filters = {}
    for f in ['labels.plinth-pool = "serve"', 'labels.plinth-pool != "serve"', "labels.plinth-pool:*",
              "labels.nope:*", 'name = "node-1*"', "(labels.plinth-pool = train) (labels.plinth-lineage = l-1)",
              'labels.plinth-pool = "serve" OR name = "node-0"', "name eq 'node-[0-2]'", "status = RUNNING",
              'machineType = "*/g2-standard-4"', "scheduling.provisioningModel = STANDARD", "NOT name = node-0"]:
        resp = svc.instances().aggregatedList(project=PROJECT, filter=f).execute()
        filters[f] = sorted(i["name"] for part in resp["items"].values() for i in part.get("instances", []))
    bad_filter = expect_http_error(svc.instances().list(project=PROJECT, zone="us-central1-a", filter="name = \"gpu-0"))
    too_many = expect_http_error(svc.instances().list(project=PROJECT, zone="us-central1-a", maxResults=501))
    empty = svc.instances().list(project=PROJECT, zone="europe-west4-b").execute()
    newest = svc.instances().list(project=PROJECT, zone="us-central1-a", orderBy="creationTimestamp desc").execute()
    return {"pages": pages, "seen": seen, "agg_pages": agg_pages, "agg_seen": agg_seen, "scopes": sorted(scopes),
            "filters": filters, "bad_filter": bad_filter, "too_many": too_many, "empty": empty,
            "newest_first": [i["name"] for i in newest["items"]]}


def scenario_errors():
    svc = compute()
    zone = "us-central1-a"
    out = {}
    body = gpu_instance("gpu-migrate", zone, spot=False)
    body["scheduling"] = {"onHostMaintenance": "MIGRATE"}
    out["gpu_migrate"] = expect_http_error(svc.instances().insert(project=PROJECT, zone=zone, body=body))
    body = gpu_instance("gpu-x", zone, machine="a3-nopegpu-8g")
    out["unknown_type"] = expect_http_error(svc.instances().insert(project=PROJECT, zone=zone, body=body))
    body = gpu_instance("Bad_Name", zone)
    out["bad_name"] = expect_http_error(svc.instances().insert(project=PROJECT, zone=zone, body=body))
    body = gpu_instance("gpu-l", zone, labels={"Env": "prod"})
    out["bad_label"] = expect_http_error(svc.instances().insert(project=PROJECT, zone=zone, body=body))
    body = gpu_instance("gpu-t", zone, machine="n1-standard-8", spot=False,
                        guestAccelerators=[{"acceleratorType": "zones/%s/acceleratorTypes/nvidia-tesla-t4" % zone,
                                            "acceleratorCount": 3}])
    out["t4_count"] = expect_http_error(svc.instances().insert(project=PROJECT, zone=zone, body=body))
    body = gpu_instance("gpu-s", zone, guestAccelerator=[])
    out["unknown_field"] = expect_http_error(svc.instances().insert(project=PROJECT, zone=zone, body=body))
    body = gpu_instance("gpu-d", zone)
    body["disks"][0]["initializeParams"]["diskSizeGb"] = "5"
    out["small_disk"] = expect_http_error(svc.instances().insert(project=PROJECT, zone=zone, body=body))
    out["bad_request_id"] = expect_http_error(
        svc.instances().insert(project=PROJECT, zone=zone, body=gpu_instance("gpu-r", zone), requestId="abc"))
    out["missing"] = expect_http_error(svc.instances().get(project=PROJECT, zone=zone, instance="nope"))
    out["unknown_zone"] = expect_http_error(svc.instances().list(project=PROJECT, zone="mars-north1-a"))
    out["other_project"] = expect_http_error(svc.instances().list(project="someone-else", zone=zone))
    wait(svc, svc.instances().insert(project=PROJECT, zone=zone, body=gpu_instance("gpu-dup", zone)).execute())
    out["duplicate"] = expect_http_error(
        svc.instances().insert(project=PROJECT, zone=zone, body=gpu_instance("gpu-dup", zone)))
    # No credentials at all, and a service account without IAM on the project.
    anonymous = compute(http=plain_http())
    out["anonymous"] = expect_http_error(anonymous.instances().list(project=PROJECT, zone=zone))
    noperm = compute(credentials("service-account-noperm.json"))
    out["noperm"] = expect_http_error(noperm.instances().list(project=PROJECT, zone=zone))
    readonly = compute(credentials(scopes=["https://www.googleapis.com/auth/compute.readonly"]))
    out["readonly_list"] = "items" in readonly.instances().list(project=PROJECT, zone=zone).execute()
    out["readonly_insert"] = expect_http_error(
        readonly.instances().insert(project=PROJECT, zone=zone, body=gpu_instance("gpu-ro", zone)))
    # Machine and accelerator types a provider looks up.
    mt = svc.machineTypes().get(project=PROJECT, zone=zone, machineType="a3-megagpu-8g").execute()
    out["machine_type"] = {k: mt.get(k) for k in ("name", "guestCpus", "memoryMb", "accelerators")}
    acc = svc.acceleratorTypes().list(project=PROJECT, zone=zone).execute()
    out["accelerators"] = sorted(a["name"] for a in acc["items"])
    return out


def scenario_capacity():
    svc = compute()
    out = {}
    a, b = "us-central1-a", "us-central1-b"
    ok = wait(svc, svc.instances().insert(project=PROJECT, zone=a, body=gpu_instance("cap-0", a)).execute())
    out["first"] = ok.get("error")
    full = svc.instances().insert(project=PROJECT, zone=a, body=gpu_instance("cap-1", a)).execute()
    out["full_initial_status"] = full["status"]
    out["full"] = wait(svc, full)
    out["full_instance"] = expect_http_error(svc.instances().get(project=PROJECT, zone=a, instance="cap-1"))
    fallback = wait(svc, svc.instances().insert(project=PROJECT, zone=b, body=gpu_instance("cap-1", b)).execute())
    out["fallback"] = fallback.get("error")
    # Quota: on-demand H100s are limited to 8 in the region; Spot H100s have their own limit of 8.
    quota = wait(svc, svc.instances().insert(project=PROJECT, zone=b,
                                             body=gpu_instance("quota-0", b, spot=False)).execute())
    out["standard_h100"] = quota.get("error")
    quota2 = wait(svc, svc.instances().insert(project=PROJECT, zone=b,
                                              body=gpu_instance("quota-1", b, spot=False)).execute())
    out["standard_h100_again"] = quota2
    region = svc.regions().get(project=PROJECT, region="us-central1").execute()
    out["region_quotas"] = {q["metric"]: [q["limit"], q["usage"]] for q in region["quotas"]}
    return out


def scenario_preempt():
    svc = compute()
    zone = "us-east4-a"
    wait(svc, svc.instances().insert(project=PROJECT, zone=zone, body=gpu_instance("spot-stop", zone)).execute())
    wait(svc, svc.instances().insert(project=PROJECT, zone=zone,
                                     body=gpu_instance("spot-del", zone, action="DELETE")).execute())
    out = {}
    stop = control("preempt", {"zone": zone, "instance": "spot-stop"})
    delete = control("preempt", {"zone": zone, "instance": "spot-del"})
    out["stop_op"] = wait(svc, stop["operation"])
    out["delete_op"] = wait(svc, delete["operation"])
    out["stopped"] = svc.instances().get(project=PROJECT, zone=zone, instance="spot-stop").execute()
    out["deleted"] = expect_http_error(svc.instances().get(project=PROJECT, zone=zone, instance="spot-del"))
    ops = svc.zoneOperations().list(project=PROJECT, zone=zone,
                                    filter='operationType = "compute.instances.preempted"').execute()
    out["preempted_targets"] = sorted(o["targetLink"].rsplit("/", 1)[1] for o in ops["items"])
    out["start"] = wait(svc, svc.instances().start(project=PROJECT, zone=zone, instance="spot-stop").execute())
    out["restarted"] = svc.instances().get(project=PROJECT, zone=zone, instance="spot-stop").execute()["status"]
    return out


def scenario_faults():
    svc = compute()
    zone = "us-central1-c"
    out = {}
    # The answer to an insert is lost once: httplib2 sends a request whose
    # connection closed before a status line once more by itself, with the same
    # requestId, and gets the same operation back.
    control("faults", {"loseNext": 1, "loseMethods": ["compute.instances.insert"]})
    rid = str(uuid.uuid4())
    op = svc.instances().insert(project=PROJECT, zone=zone, body=gpu_instance("lost-0", zone),
                                requestId=rid).execute()
    out["retried_op"] = wait(svc, op)["status"]
    # Lost twice in a row: httplib2 gives up and the caller sees the connection
    # fail; it calls again with its requestId and still gets one instance.
    control("faults", {"loseNext": 2, "loseMethods": ["compute.instances.insert"]})
    rid2 = str(uuid.uuid4())
    req = svc.instances().insert(project=PROJECT, zone=zone, body=gpu_instance("lost-1", zone), requestId=rid2)
    try:
        req.execute()
        out["lost_raised"] = None
    except Exception as e:  # the transport's error: the connection closed without an answer
        out["lost_raised"] = type(e).__name__
    again = svc.instances().insert(project=PROJECT, zone=zone, body=gpu_instance("lost-1", zone),
                                   requestId=rid2).execute()
    out["again"] = wait(svc, again)["status"]
    out["names"] = sorted(i["name"] for i in svc.instances().list(project=PROJECT, zone=zone).execute()["items"])
    # Throttling: 3 calls fit in the bucket, the 4th is refused with Google's 429.
    control("faults", {"rateLimit": {"rps": 0.001, "burst": 3, "reason": "userRateLimitExceeded"}})
    for _ in range(3):
        svc.instances().get(project=PROJECT, zone=zone, instance="lost-0").execute()
    out["throttled"] = expect_http_error(svc.instances().get(project=PROJECT, zone=zone, instance="lost-0"))
    control("faults", {"rateLimit": None, "rate503": 1.0})
    out["unavailable"] = expect_http_error(svc.instances().get(project=PROJECT, zone=zone, instance="lost-0"))
    control("faults", {"rate503": 0.0})
    out["counters"] = control("counters")
    return out


def scenario_oauth():
    out = {}
    # A key the emulator does not know (a deleted key): Google's invalid_grant.
    try:
        credentials("service-account-revoked.json").refresh(
            google_auth_httplib2.Request(plain_http()))
        out["revoked"] = None
    except google.auth.exceptions.RefreshError as e:
        out["revoked"] = str(e.args[0])
    # An assertion made two hours ago (its exp is an hour past).
    real_utcnow = google.auth._helpers.utcnow
    google.auth._helpers.utcnow = lambda: real_utcnow() - datetime.timedelta(hours=2)
    try:
        credentials().refresh(google_auth_httplib2.Request(plain_http()))
        out["expired_assertion"] = None
    except google.auth.exceptions.RefreshError as e:
        out["expired_assertion"] = str(e.args[0])
    finally:
        google.auth._helpers.utcnow = real_utcnow
    # No scopes at all.
    try:
        credentials(scopes=[]).refresh(google_auth_httplib2.Request(plain_http()))
        out["no_scope"] = None
    except google.auth.exceptions.RefreshError as e:
        out["no_scope"] = str(e.args[0])
    # A good key: the token works; once the emulator expires every token, the
    # next call gets 401 and AuthorizedHttp refreshes and retries by itself.
    creds = credentials()
    svc = compute(creds)
    first = svc.instances().list(project=PROJECT, zone="us-central1-a").execute()
    token_before = creds.token
    out["expires_in_s"] = round((creds.expiry - datetime.datetime.utcnow()).total_seconds())
    out["expired_tokens"] = control("tokens/expire", {})["expired"]
    second = svc.instances().list(project=PROJECT, zone="us-central1-a").execute()
    out["refreshed"] = creds.token != token_before
    out["kinds"] = [first["kind"], second["kind"]]
    # The old token is refused with Google's 401.
    h = plain_http()
    resp, content = h.request(emulator + "/compute/v1/projects/%s/zones/us-central1-a/instances" % PROJECT,
                              headers={"Authorization": "Bearer " + token_before})
    out["old_token"] = {"status": resp.status, "www_authenticate": resp.get("www-authenticate"),
                        "body": json.loads(content)}
    out["counters"] = control("counters")["methods"]
    return out


result = globals()["scenario_" + scenario]()
print(json.dumps(result, indent=1, sort_keys=True))
