local base = fixture("compliant")

test { name = "personal data, burst pools and backups all in EU/EEA regions pass", blueprint = base, expect = {} }

test {
  name = "a PHI object tier in us-east4 without a transfer basis fails; so does the backup into it",
  blueprint = replace(base, 'region: europe-west4\n      capacity_tb: 1500', 'region: us-east4\n      capacity_tb: 1500'),
  expect = { { "GDPR-RES-001", "storage.tier.phi-dr" }, { "GDPR-RES-003", "storage.backup.lake-dr" } },
}

test {
  name = "a burst pool in us-east-1 reaching the pii archive fails; London without a declared basis fails too",
  blueprint = replace(replace(base, 'region: eu-west-1\n    instance_type: p5.48xlarge', 'region: us-east-1\n    instance_type: p5.48xlarge'),
    'region: westeurope', 'region: uksouth'),
  expect = { { "GDPR-RES-002", "aws.instance.aws-eu-p5" }, { "GDPR-RES-002", "azure.vm.azure-eu-nd" } },
}

test {
  name = "London and Zurich under their adequacy decisions (Art. 45) pass",
  blueprint = replace(replace(base, 'region: westeurope', 'region: uksouth\n    transfer: {basis: adequacy}'),
    'region: europe-west4\n      capacity_tb: 1500', 'region: europe-west6\n      transfer: {basis: adequacy}\n      capacity_tb: 1500'),
  expect = {},
}

test {
  name = "standard contractual clauses with a reference pass; without one, or a derogation, they fail",
  blueprint = replace(replace(replace(base,
    'region: europe-west4\n      capacity_tb: 1500', 'region: us-east4\n      transfer: {basis: scc, reference: "SCC module 2 with Example Health US, signed 2026-03-01"}\n      capacity_tb: 1500'),
    'region: eu-west-1\n    instance_type: p5.48xlarge', 'region: us-east-1\n    transfer: {basis: scc}\n    instance_type: p5.48xlarge'),
    'region: westeurope', 'region: eastus\n    transfer: {basis: derogation}'),
  expect = { { "GDPR-RES-002", "aws.instance.aws-eu-p5" }, { "GDPR-RES-002", "azure.vm.azure-eu-nd" } },
}

test {
  name = "adequacy in a country without a decision fails; the US decision needs the DPF certification named",
  blueprint = replace(replace(base,
    'region: europe-west4\n      capacity_tb: 1500', 'region: asia-south1\n      transfer: {basis: adequacy}\n      capacity_tb: 1500'),
    'region: eu-west-1\n    instance_type: p5.48xlarge', 'region: us-east-1\n    transfer: {basis: adequacy}\n    instance_type: p5.48xlarge'),
  expect = { { "GDPR-RES-001", "storage.tier.phi-dr" }, { "GDPR-RES-003", "storage.backup.lake-dr" },
             { "GDPR-RES-002", "aws.instance.aws-eu-p5" } },
}

test {
  name = "a burst pool outside the EU that reaches no personal data passes",
  blueprint = replace(replace(base, 'region: eu-west-1\n    instance_type: p5.48xlarge', 'region: us-east-1\n    instance_type: p5.48xlarge'),
    '    checkpointing: {interval_minutes: 15, target: pii-archive}\n    storage: [pii-archive]\n', ''),
  policies = { "GDPR-RES-002" },
  expect = {},
}

test {
  name = "a lifecycle copy of personal data into a non-EU internal tier fails GDPR-RES-003",
  blueprint = replace(replace(base,
    'region: eu-west-1\n      capacity_tb: 1500\n      classification: pii', 'region: us-west-2\n      capacity_tb: 1500\n      classification: internal'),
    'source: phi-lake, target: pii-archive', 'source: phi-lake, target: phi-dr'),
  policies = { "GDPR-RES-001", "GDPR-RES-003" },
  expect = { { "GDPR-RES-003", "storage.tier.pii-archive" } },
}
