#!/usr/bin/python3
"""Drives azure-emulator with Debian's Azure SDK for Python (python3-azure:
azure-identity, azure-mgmt-resource, azure-mgmt-network, azure-mgmt-compute)
the way a user's program would, and prints what the SDK saw as one JSON object.

usage: sdk_check.py SCENARIO CONFIG_JSON
CONFIG_JSON: {"base", "tenant", "client", "secret", "subscription", "certificate"?}
REQUESTS_CA_BUNDLE must point at the emulator's ca.pem (the caller sets it).
Every LRO polls with polling_interval=0.05 s; the emulator's Retry-After
(0 in the tests) takes precedence when it is not zero.
"""
import json
import sys
import time
import urllib.request

from azure.core.credentials import AccessToken
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ResourceNotFoundError
from azure.core.rest import HttpRequest
from azure.identity import CertificateCredential, ClientSecretCredential
from azure.mgmt.compute import ComputeManagementClient
from azure.mgmt.network import NetworkManagementClient
from azure.mgmt.resource import ResourceManagementClient

POLL = 0.05


def error_of(e):
    """ARM's code and message as azure-core parsed them from the answer."""
    err = getattr(e, "error", None)
    return {
        "type": type(e).__name__,
        "status": getattr(e, "status_code", None),
        "code": getattr(err, "code", None),
        "message": getattr(err, "message", None) or str(e),
    }


class Emu:
    def __init__(self, cfg, credential=None):
        self.cfg = cfg
        self.base = cfg["base"]
        self.sub = cfg["subscription"]
        self.cred = credential or ClientSecretCredential(
            cfg["tenant"], cfg["client"], cfg["secret"], authority=self.base, instance_discovery=False)
        kw = {"base_url": self.base}
        self.resources = ResourceManagementClient(self.cred, self.sub, **kw)
        self.network = NetworkManagementClient(self.cred, self.sub, **kw)
        self.compute = ComputeManagementClient(self.cred, self.sub, **kw)

    def control(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + "/__emulator/" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        import ssl
        ctx = ssl.create_default_context(cafile=self.cfg["ca"])
        with urllib.request.urlopen(req, context=ctx) as r:
            return json.loads(r.read() or b"null")

    def network_for(self, rg, location="eastus"):
        self.resources.resource_groups.create_or_update(rg, {"location": location})
        vnet = self.network.virtual_networks.begin_create_or_update(
            rg, "vnet", {"location": location, "address_space": {"address_prefixes": ["10.0.0.0/16"]},
                         "subnets": [{"name": "default", "address_prefix": "10.0.0.0/24"}]},
            polling_interval=POLL).result()
        return vnet.subnets[0].id

    def nic(self, rg, name, subnet, location="eastus", accelerated=True):
        return self.network.network_interfaces.begin_create_or_update(
            rg, name, {"location": location, "enable_accelerated_networking": accelerated,
                       "ip_configurations": [{"name": "ipconfig1", "subnet": {"id": subnet}}]},
            polling_interval=POLL).result()

    @staticmethod
    def vm_body(nic_id, size="Standard_ND96isr_H100_v5", zone=None, spot=True, eviction="Deallocate", tags=None,
                location="eastus"):
        body = {
            "location": location,
            "tags": tags or {"plinth-address": "burst_pools.gpu[0]"},
            "hardware_profile": {"vm_size": size},
            "storage_profile": {
                "image_reference": {"publisher": "Canonical", "offer": "ubuntu-24_04-lts", "sku": "server",
                                    "version": "latest"},
                "os_disk": {"create_option": "FromImage", "caching": "ReadWrite",
                            "managed_disk": {"storage_account_type": "Premium_LRS"}, "delete_option": "Delete"}},
            "os_profile": {"computer_name": "gpu", "admin_username": "plinth",
                           "custom_data": "I2Nsb3VkLWNvbmZpZwpydW5jbWQ6IFtbZWNobywgaGldXQo=",
                           "linux_configuration": {"disable_password_authentication": True,
                                                   "ssh": {"public_keys": [{
                                                       "path": "/home/plinth/.ssh/authorized_keys",
                                                       "key_data": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPlinth"}]}}},
            "network_profile": {"network_interfaces": [{"id": nic_id, "primary": True, "delete_option": "Delete"}]},
            "security_profile": {"encryption_at_host": True},
        }
        if zone:
            body["zones"] = [zone]
        if spot:
            body.update({"priority": "Spot", "eviction_policy": eviction, "billing_profile": {"max_price": -1}})
        return body

    def create_vm(self, rg, name, subnet, **kw):
        nic = self.nic(rg, name + "-nic", subnet, location=kw.get("location", "eastus"))
        return self.compute.virtual_machines.begin_create_or_update(
            rg, name, self.vm_body(nic.id, **kw), polling_interval=POLL).result()


def power_of(vm_or_view):
    view = getattr(vm_or_view, "instance_view", None) or vm_or_view
    for s in view.statuses:
        if s.code.startswith("PowerState/"):
            return s.code
    return None


def lifecycle(cfg):
    """Create a Spot GPU VM with a NIC, read it back, list with paging, act on it, delete it."""
    emu = Emu(cfg)
    out = {}
    subnet = emu.network_for("pool")
    nic = emu.nic("pool", "gpu-0-nic", subnet)
    out["nic"] = {"ip": nic.ip_configurations[0].private_ip_address,
                  "accelerated": nic.enable_accelerated_networking, "state": nic.provisioning_state}
    poller = emu.compute.virtual_machines.begin_create_or_update(
        "pool", "gpu-0", emu.vm_body(nic.id, zone="1"), polling_interval=POLL)
    out["initial_status"] = poller.status()
    vm = poller.result()
    out["created"] = {"state": vm.provisioning_state, "size": vm.hardware_profile.vm_size, "zones": vm.zones,
                      "priority": vm.priority, "eviction": vm.eviction_policy,
                      "max_price": vm.billing_profile.max_price, "encryption_at_host":
                          vm.security_profile.encryption_at_host, "tags": vm.tags, "vm_id": vm.vm_id,
                      "os_disk": vm.storage_profile.os_disk.name,
                      "disk_type": vm.storage_profile.os_disk.managed_disk.storage_account_type,
                      "custom_data_returned": vm.os_profile.custom_data}
    got = emu.compute.virtual_machines.get("pool", "gpu-0", expand="instanceView")
    out["power"] = power_of(got)
    nic_after = emu.network.network_interfaces.get("pool", "gpu-0-nic")
    out["nic_attached_to"] = nic_after.virtual_machine.id if nic_after.virtual_machine else None
    # A second PUT of the same VM is an update of the same VM, never a second one.
    again = emu.compute.virtual_machines.begin_create_or_update(
        "pool", "gpu-0", emu.vm_body(nic.id, zone="1", tags={"plinth-address": "burst_pools.gpu[0]", "gen": "2"}),
        polling_interval=POLL).result()
    out["updated"] = {"vm_id": again.vm_id, "tags": again.tags, "state": again.provisioning_state}
    # Power actions are LROs answered 202 with Location.
    emu.compute.virtual_machines.begin_deallocate("pool", "gpu-0", polling_interval=POLL).result()
    out["after_deallocate"] = power_of(emu.compute.virtual_machines.get("pool", "gpu-0", expand="instanceView"))
    emu.compute.virtual_machines.begin_start("pool", "gpu-0", polling_interval=POLL).result()
    out["after_start"] = power_of(emu.compute.virtual_machines.instance_view("pool", "gpu-0"))
    # Paging: more VMs than one page (the test runs with --page-size 2).
    pollers = []
    for i in range(1, 5):
        n = emu.nic("pool", "gpu-%d-nic" % i, subnet)
        pollers.append(emu.compute.virtual_machines.begin_create_or_update(
            "pool", "gpu-%d" % i, emu.vm_body(n.id, zone=str(1 + i % 3)), polling_interval=POLL))
    for p in pollers:
        p.result()
    out["listed"] = sorted(v.name for v in emu.compute.virtual_machines.list("pool"))
    out["listed_all"] = sorted(v.name for v in emu.compute.virtual_machines.list_all())
    out["resources_tagged"] = sorted(
        r.name for r in emu.resources.resources.list_by_resource_group(
            "pool", filter="tagName eq 'gen' and tagValue eq '2'"))
    # Delete: 202, polled to completion; the NIC with deleteOption Delete goes too.
    emu.compute.virtual_machines.begin_delete("pool", "gpu-0", polling_interval=POLL).result()
    try:
        emu.compute.virtual_machines.get("pool", "gpu-0")
        out["after_delete"] = "still there"
    except ResourceNotFoundError as e:
        out["after_delete"] = error_of(e)
    out["nics_left"] = sorted(n.name for n in emu.network.network_interfaces.list("pool"))
    # PATCH updates in place.
    patched = emu.compute.virtual_machines.begin_update("pool", "gpu-1", {"tags": {"patched": "yes"}},
                                                        polling_interval=POLL).result()
    out["patched"] = {"tags": patched.tags, "state": patched.provisioning_state}
    # Deleting the group (202 + Location, polled) takes everything in it.
    emu.resources.resource_groups.begin_delete("pool", polling_interval=POLL).result()
    out["groups_after_delete"] = sorted(g.name for g in emu.resources.resource_groups.list())
    return out


def errors(cfg):
    """ARM's error codes through the SDK: synchronous 409s, LRO failures, 404s, api-version, throttling."""
    emu = Emu(cfg)
    out = {}
    subnet = emu.network_for("errs")

    def attempt(name, fn):
        try:
            fn()
            out[name] = "no error"
        except HttpResponseError as e:
            out[name] = error_of(e)

    # The test runs with --capacity eastus/1:Standard_ND96isr_H100_v5=1: the second VM in zone 1 fails in its LRO.
    emu.create_vm("errs", "first", subnet, zone="1")
    attempt("zonal_allocation", lambda: emu.create_vm("errs", "second", subnet, zone="1"))
    failed = emu.compute.virtual_machines.get("errs", "second", expand="instanceView")
    out["failed_vm"] = {"state": failed.provisioning_state,
                        "status": [s.code for s in failed.instance_view.statuses]}
    # --capacity westus3:Standard_ND96isr_H100_v5=0: no zone given, the whole region is out.
    wsub = emu.network_for("west", "westus3")
    attempt("regional_allocation", lambda: emu.create_vm("west", "w1", wsub, location="westus3"))
    # --sku-unavailable eastus/2:Standard_ND96isr_H100_v5: refused before anything is created.
    attempt("sku", lambda: emu.create_vm("errs", "z2", subnet, zone="2"))
    out["sku_vm_exists"] = any(v.name == "z2" for v in emu.compute.virtual_machines.list("errs"))
    # --quota eastus:standardNCadsH100v5Family=40: one NC40ads fits, a second does not.
    emu.create_vm("errs", "nc-0", subnet, size="Standard_NC40ads_H100_v5", spot=False)
    attempt("quota", lambda: emu.create_vm("errs", "nc-1", subnet, size="Standard_NC40ads_H100_v5", spot=False))
    attempt("not_found", lambda: emu.compute.virtual_machines.get("errs", "nope"))
    attempt("no_group", lambda: emu.compute.virtual_machines.get("nogroup", "nope"))
    attempt("accel", lambda: emu.create_vm("errs", "small", subnet, size="Standard_B2s", spot=False))
    # Raw requests through the same authenticated pipeline.
    vm_url = "%s/subscriptions/%s/resourceGroups/errs/providers/Microsoft.Compute/virtualMachines/first" % (
        emu.base, emu.sub)
    for name, url in (("missing_api_version", vm_url), ("bad_api_version", vm_url + "?api-version=2099-01-01")):
        resp = emu.compute._client.send_request(HttpRequest("GET", url))
        out[name] = {"status": resp.status_code, "body": resp.json()}
    # One throttled answer: the SDK honours Retry-After and retries by itself.
    emu.control("POST", "faults", {"throttleNext": 1})
    started = time.monotonic()
    names = [v.name for v in emu.compute.virtual_machines.list("errs")]
    out["throttled_then_listed"] = {"names": sorted(names), "seconds": round(time.monotonic() - started, 2)}
    return out


class FixedToken:
    def __init__(self, token):
        self.token = token

    def get_token(self, *scopes, **kw):
        return AccessToken(self.token, int(time.time()) + 3600)


def auth(cfg):
    """Entra through azure-identity: secret, certificate, and its AADSTS errors; ARM's 401s."""
    out = {}
    base = cfg["base"]
    scope = "https://management.azure.com/.default"

    def token_error(name, cred):
        try:
            cred.get_token(scope)
            out[name] = "no error"
        except ClientAuthenticationError as e:
            out[name] = str(e)

    token_error("wrong_secret", ClientSecretCredential(cfg["tenant"], cfg["client"], "not-the-secret",
                                                       authority=base, instance_discovery=False))
    token_error("unknown_client", ClientSecretCredential(cfg["tenant"], "00000000-1111-2222-3333-444444444444",
                                                         cfg["secret"], authority=base, instance_discovery=False))
    token_error("unknown_tenant", ClientSecretCredential("99999999-8888-7777-6666-555555555555", cfg["client"],
                                                         cfg["secret"], authority=base, instance_discovery=False))
    cert = CertificateCredential(cfg["tenant"], cfg["client"], certificate_path=cfg["certificate"], authority=base,
                                 instance_discovery=False)
    emu = Emu(cfg, cert)
    emu.resources.resource_groups.create_or_update("certs", {"location": "eastus"})
    out["certificate_groups"] = sorted(g.name for g in emu.resources.resource_groups.list())
    # An expired token minted by the control endpoint: ARM answers 401 ExpiredAuthenticationToken.
    expired = emu.control("POST", "token", {"lifetimeSeconds": -120})["access_token"]
    try:
        ComputeManagementClient(FixedToken(expired), cfg["subscription"], base_url=base).virtual_machines.list(
            "certs").next()
        out["expired"] = "no error"
    except HttpResponseError as e:
        out["expired"] = error_of(e)
    return out


def lost(cfg):
    """The answer to a PUT is lost after the VM was accepted; the SDK's retry must not make a second VM."""
    emu = Emu(cfg)
    subnet = emu.network_for("lost")
    nic = emu.nic("lost", "only-nic", subnet)
    emu.control("POST", "faults", {"loseNextResponses": 1, "methods": ["PUT"]})
    vm = emu.compute.virtual_machines.begin_create_or_update(
        "lost", "only", emu.vm_body(nic.id), polling_interval=POLL).result()
    return {"state": vm.provisioning_state, "vms": sorted(v.name for v in emu.compute.virtual_machines.list("lost"))}


def main():
    scenario, cfg = sys.argv[1], json.loads(sys.argv[2])
    result = {"lifecycle": lifecycle, "errors": errors, "auth": auth, "lost": lost}[scenario](cfg)
    print(json.dumps(result, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
