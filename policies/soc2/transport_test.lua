local base = fixture("compliant")

test { name = "TLS 1.3 with mTLS passes", blueprint = base, expect = {} }

test {
  name = "TLS 1.2 fails SOC2-TLS-001",
  blueprint = replace(base, 'transport: {tls_min: "1.3", mtls: true}', 'transport: {tls_min: "1.2", mtls: true}'),
  expect = { { "SOC2-TLS-001", "access.transport.default" } },
}

test {
  name = "mTLS off fails SOC2-TLS-002",
  blueprint = replace(base, 'transport: {tls_min: "1.3", mtls: true}', 'transport: {tls_min: "1.3", mtls: false}'),
  expect = { { "SOC2-TLS-002", "access.transport.default" } },
}

test {
  name = "no transport section fails both",
  blueprint = replace(base, '  transport: {tls_min: "1.3", mtls: true}\n', ''),
  expect = { { "SOC2-TLS-001", "access.transport.default" }, { "SOC2-TLS-002", "access.transport.default" } },
}
