local base = fixture("compliant")

test { name = "every namespace has a GPU quota that the cluster can honour", blueprint = base, expect = {} }

test {
  name = "a namespace without a GPU quota fails ML-QUOTA-001",
  blueprint = replace(base, '{name: model-review, quota: {gpus: 8}, service_accounts: []}', '{name: model-review, service_accounts: []}'),
  expect = { { "ML-QUOTA-001", "access.namespace.model-review" } },
}

test {
  name = "quotas above 128 on-prem + 64 burst GPUs fail ML-QUOTA-002",
  blueprint = replace(base, '{name: radiology-ai, quota: {gpus: 64}', '{name: radiology-ai, quota: {gpus: 137}'),
  expect = { { "ML-QUOTA-002", "" } },
}

test {
  name = "quotas of exactly 192 GPUs pass",
  blueprint = replace(base, '{name: radiology-ai, quota: {gpus: 64}', '{name: radiology-ai, quota: {gpus: 136}'),
  expect = {},
}

test {
  name = "ML-QUOTA-002 counts GPUs of instance types from the catalog (p5en.48xlarge: 8 H200)",
  blueprint = replace(base, 'instance_type: p5.48xlarge', 'instance_type: p5en.48xlarge'),
  policies = { "ML-QUOTA-002" },
  expect = {},
}

test {
  name = "a burst pool's GPUs count at its max: 4 x p6-b200.48xlarge add 32 GPUs",
  blueprint = replace(replace(base, 'instance_type: p5.48xlarge', 'instance_type: p6-b200.48xlarge'),
    '{name: radiology-ai, quota: {gpus: 64}', '{name: radiology-ai, quota: {gpus: 137}'),
  policies = { "ML-QUOTA-002" },
  expect = { { "ML-QUOTA-002", "" } },
}

local on_cluster = base .. "clusters:\n  - {name: clinic, context: admin}\n"

test {
  name = "namespaces applied to a cluster with GPU quotas pass ML-QUOTA-003",
  blueprint = on_cluster,
  policies = { "ML-QUOTA-003" },
  expect = {},
}

test {
  name = "a namespace applied to a cluster without a GPU quota fails ML-QUOTA-001 and ML-QUOTA-003 at kubernetes.namespace",
  blueprint = replace(on_cluster, '{name: model-review, quota: {gpus: 8}, service_accounts: []}', '{name: model-review, service_accounts: []}'),
  policies = { "ML-QUOTA-001", "ML-QUOTA-003" },
  expect = { { "ML-QUOTA-001", "kubernetes.namespace.model-review" }, { "ML-QUOTA-003", "kubernetes.namespace.model-review" } },
}
