local base = fixture("compliant")

test { name = "images pinned by sha256 digest pass", blueprint = base, expect = {} }

test {
  name = "a tag and a short digest fail",
  blueprint = replace(replace(base,
    '"registry.eu.example/clinical/train@sha256:92bc2e412115876270c842f18eede00e752babbb9bf6f402ee8c5ab3b6746af2"', '"registry.eu.example/clinical/train:latest"'),
    'dcgm-exporter@sha256:69f97546c05d33cb2e92b8224e9071cd9114725f1a6361996d439e65ae9bf2b4', 'dcgm-exporter@sha256:69f97546'),
  expect = { { "ML-IMG-001", "plinth.stack.secure-train" }, { "ML-IMG-001", "plinth.stack.secure-train" } },
}
