local base = fixture("compliant")

test {
  name = "every tier and backup target encrypted with AES-256 passes",
  blueprint = base,
  expect = {},
}

test {
  name = "a tier without encryption and one with a weak cipher fail",
  blueprint = replace(replace(base,
    'encryption: {at_rest: aes-256-xts, kms_key: "vault:transit/clinical-nvme"}', 'encryption: {at_rest: none}'),
    'classification: phi\n      encryption: {at_rest: aes-256-xts, in_transit: tls1.3', 'classification: phi\n      encryption: {in_transit: tls1.3'),
  policies = { "SOC2-ENC-001" },
  expect = { { "SOC2-ENC-001", "storage.tier.phi-scratch" }, { "SOC2-ENC-001", "storage.tier.phi-lake" } },
}

test {
  name = "a backup into an unencrypted tier fails",
  blueprint = replace(base, 'at_rest: aes-256-gcm, in_transit: tls1.3, kms_key: "projects', 'at_rest: none, in_transit: tls1.3, kms_key: "projects'),
  expect = { { "SOC2-ENC-001", "storage.tier.phi-dr" }, { "SOC2-ENC-002", "storage.backup.lake-dr" } },
}

test {
  name = "LUKS2 and self-encrypting drives count as encrypted",
  blueprint = replace(replace(base, 'at_rest: aes-256-xts, kms_key', 'at_rest: sed, kms_key'),
    'at_rest: aes-256-xts, in_transit', 'at_rest: luks2, in_transit'),
  expect = {},
}
