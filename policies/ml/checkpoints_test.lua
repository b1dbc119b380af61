local base = fixture("compliant")
local backups = '  backups:\n    - {name: lake-to-archive, source: phi-lake, target: pii-archive, schedule: "0 1 * * *",\n       retention_days: 2190, dr_test_interval_days: 90}\n    - {name: lake-dr, source: phi-lake, target: phi-dr, schedule: "0 */12 * * *",\n       retention_days: 365, dr_test_interval_days: 30}\n'

test { name = "checkpoint tiers backed up and restore-tested quarterly; spot pools checkpoint", blueprint = base, expect = {} }

test {
  name = "a training tier and checkpoint targets without any backup fail ML-BAK-001",
  blueprint = replace(base, backups, '  backups: []\n'),
  policies = { "ML-BAK-001" },
  expect = { { "ML-BAK-001", "storage.tier.phi-lake" }, { "ML-BAK-001", "storage.tier.pii-archive" },
             { "ML-BAK-001", "storage.tier.phi-dr" } },
}

test {
  name = "a checkpoint backup restore-tested every 180 days fails ML-BAK-002",
  blueprint = replace(base, 'retention_days: 2190, dr_test_interval_days: 90', 'retention_days: 2190, dr_test_interval_days: 180'),
  policies = { "ML-BAK-002" },
  expect = { { "ML-BAK-002", "storage.backup.lake-to-archive" } },
}

test {
  name = "a spot pool without checkpointing and one checkpointing every 2 hours fail ML-SPOT-001",
  blueprint = replace(replace(base,
    '    checkpointing: {interval_minutes: 15, target: pii-archive}\n    storage: [pii-archive]\n', '    storage: [pii-archive]\n'),
    'spot: true\n    stack: secure-train\n    checkpointing: {interval_minutes: 15, target: pii-archive}',
    'spot: true\n    stack: secure-train\n    checkpointing: {interval_minutes: 120, target: pii-archive}'),
  policies = { "ML-SPOT-001" },
  expect = { { "ML-SPOT-001", "aws.instance.aws-eu-p5" }, { "ML-SPOT-001", "azure.vm.azure-eu-nd" } },
}

test {
  name = "an on-demand pool needs no checkpointing",
  blueprint = replace(base, '    checkpointing: {interval_minutes: 30, target: phi-dr}\n', ''),
  policies = { "ML-SPOT-001" },
  expect = {},
}
