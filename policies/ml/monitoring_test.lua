local base = fixture("compliant")

test { name = "DCGM and Prometheus on pass", blueprint = base, expect = {} }

test {
  name = "DCGM off fails",
  blueprint = replace(base, 'monitoring: {dcgm: true, prometheus: true, grafana: true}', 'monitoring: {dcgm: false, prometheus: true, grafana: true}'),
  expect = { { "ML-MON-001", "plinth.monitoring.default" } },
}

test {
  name = "no monitoring section fails twice",
  blueprint = replace(base, 'monitoring: {dcgm: true, prometheus: true, grafana: true}', ''),
  expect = { { "ML-MON-001", "plinth.monitoring.default" }, { "ML-MON-001", "plinth.monitoring.default" } },
}
