local base = fixture("compliant")

test { name = "the training pool has its own training VLAN and VRF", blueprint = base, expect = {} }

test {
  name = "training traffic in the management VRF fails",
  blueprint = replace(base, '{name: phi-fabric, id: 300, cidr: 10.30.0.0/16, vrf: phi,', '{name: phi-fabric, id: 300, cidr: 10.30.0.0/16, vrf: mgmt,'),
  expect = { { "ML-NET-001", "baremetal.node.secure-train" } },
}

test {
  name = "a training pool with no training VLAN fails",
  blueprint = replace(base, 'networks: [phi-fabric, phi-storage, oob]', 'networks: [phi-storage, oob]'),
  expect = { { "ML-NET-001", "baremetal.node.secure-train" } },
}
