local base = fixture("compliant")

test { name = "encrypted personal data and TLS 1.3 pass", blueprint = base, expect = {} }

test {
  name = "an unencrypted pii tier and TLS 1.2 fail",
  blueprint = replace(replace(base, 'at_rest: aes-256-gcm, in_transit: tls1.3, kms_key: "arn', 'at_rest: none, in_transit: tls1.3, kms_key: "arn'),
    'tls_min: "1.3"', 'tls_min: "1.2"'),
  expect = { { "GDPR-SEC-001", "storage.tier.pii-archive" }, { "GDPR-SEC-001", "access.transport.default" } },
}
