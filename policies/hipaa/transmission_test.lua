local base = fixture("compliant")

test { name = "TLS 1.3, mTLS and tls1.3 on network PHI tiers pass", blueprint = base, expect = {} }

test {
  name = "TLS 1.2 without mTLS fails twice",
  blueprint = replace(base, 'transport: {tls_min: "1.3", mtls: true}', 'transport: {tls_min: "1.2", mtls: false}'),
  expect = { { "HIPAA-TLS-001", "access.transport.default" }, { "HIPAA-TLS-001", "access.transport.default" } },
}

test {
  name = "a network PHI tier without transit encryption fails; node-local NVMe does not need it",
  blueprint = replace(base, 'at_rest: aes-256-xts, in_transit: tls1.3, kms_key: "vault', 'at_rest: aes-256-xts, kms_key: "vault'),
  expect = { { "HIPAA-TLS-001", "storage.tier.phi-lake" } },
}
