"""Drives redfish-emulator with Debian's python3-sushy, a real Redfish client.

usage: sushy_check.py BASE_URL ROOT_PREFIX CA_PEM USER PASSWORD

Opens a session, finds the single system, sets a one-time PXE boot
override, powers the system on and waits for PowerState On. Prints one JSON
object with what sushy saw; test_redfish_emulator checks it and checks the
emulator's own state afterwards.
"""
import json
import sys
import time

import sushy
from sushy import auth

base_url, root_prefix, ca, user, password = sys.argv[1:6]
root = sushy.Sushy(base_url, root_prefix=root_prefix, verify=ca,
                   auth=auth.SessionAuth(username=user, password=password))
system = root.get_system()
before = system.power_state.value
system.set_system_boot_options(sushy.BootSource.PXE,
                               enabled=sushy.BootSourceOverrideEnabled.ONCE)
system.refresh()
boot_after_patch = {"target": system.boot.target.value,
                    "enabled": system.boot.enabled.value}
system.reset_system(sushy.ResetType.ON)
system.refresh()
states = [system.power_state.value]
deadline = time.time() + 10
while system.power_state != sushy.PowerState.ON and time.time() < deadline:
    time.sleep(0.05)
    system.refresh()
    states.append(system.power_state.value)
print(json.dumps({"system": system.path, "before": before,
                  "boot_after_patch": boot_after_patch,
                  "states": states, "session": root._auth._session_resource_id}))
root._auth.close()
