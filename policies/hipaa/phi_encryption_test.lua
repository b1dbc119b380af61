local base = fixture("compliant")

test { name = "PHI on AES-256 tiers, copied into encrypted tiers, passes", blueprint = base, expect = {} }

test {
  name = "a PHI tier without AES-256 fails HIPAA-ENC-001",
  blueprint = replace(base, 'encryption: {at_rest: aes-256-xts, kms_key: "vault:transit/clinical-nvme"}', 'encryption: {at_rest: none}'),
  expect = { { "HIPAA-ENC-001", "storage.tier.phi-scratch" } },
}

test {
  name = "PHI backed up and transitioned into an unencrypted tier fails HIPAA-ENC-002",
  blueprint = replace(base, 'encryption: {at_rest: aes-256-gcm, in_transit: tls1.3, kms_key: "arn', 'encryption: {in_transit: tls1.3, kms_key: "arn'),
  expect = { { "HIPAA-ENC-002", "storage.backup.lake-to-archive" }, { "HIPAA-ENC-002", "storage.tier.pii-archive" } },
}
