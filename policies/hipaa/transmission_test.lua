local base = fixture("compliant")

test { name = "TLS 1.3, mTLS and tls1.3 on network PHI tiers pass", blueprint = base, expect = {} }

test {
  name = "TLS 1.2 without mTLS is encryption in transit but below the house baseline (HIPAA-TLS-002 twice)",
  blueprint = replace(base, 'transport: {tls_min: "1.3", mtls: true}', 'transport: {tls_min: "1.2", mtls: false}'),
  expect = { { "HIPAA-TLS-002", "access.transport.default" }, { "HIPAA-TLS-002", "access.transport.default" } },
}

test {
  name = "no minimum TLS version fails HIPAA-TLS-001",
  blueprint = replace(base, 'transport: {tls_min: "1.3", mtls: true}', 'transport: {mtls: true}'),
  expect = { { "HIPAA-TLS-001", "access.transport.default" }, { "HIPAA-TLS-002", "access.transport.default" } },
}

test {
  name = "a network PHI tier without transit encryption fails HIPAA-TLS-001 once; node-local NVMe does not need it",
  blueprint = replace(base, 'at_rest: aes-256-xts, in_transit: tls1.3, kms_key: "vault', 'at_rest: aes-256-xts, kms_key: "vault'),
  expect = { { "HIPAA-TLS-001", "storage.tier.phi-lake", "holds PHI but sets no encryption in transit" } },
}

test {
  name = "a network PHI tier on tls1.2 meets HIPAA-TLS-001 but not the house baseline",
  blueprint = replace(base, 'at_rest: aes-256-xts, in_transit: tls1.3, kms_key: "vault', 'at_rest: aes-256-xts, in_transit: tls1.2, kms_key: "vault'),
  expect = { { "HIPAA-TLS-002", "storage.tier.phi-lake" } },
}
