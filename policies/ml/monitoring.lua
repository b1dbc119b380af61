-- ML practice: GPU health (Xid errors, ECC, thermals, NVLink) is only visible
-- through DCGM, scraped by Prometheus.

policy {
  id = "ML-MON-001",
  title = "GPU nodes are monitored with DCGM and Prometheus",
  description = "A blueprint with node or burst pools enables monitoring.dcgm and monitoring.prometheus. Does not prove alerts exist or are acted on (plinth verify reports what the nodes' exporters show).",
  severity = "medium",
  enforcement = "advisory",
  controls = { soc2 = { "CC7.2", "A1.1" } },
  check = function(ctx)
    local b = ctx.blueprint
    if #b.node_pools == 0 and #b.burst_pools == 0 then not_applicable(nil, "the blueprint has no GPU pools to monitor"); return end
    local m = b.monitoring
    local address = "plinth.monitoring.default"
    if not (m and m.dcgm) then
      fail(address, "the DCGM exporter is off; set monitoring.dcgm: true to see GPU errors, ECC and thermals")
    end
    if not (m and m.prometheus) then
      fail(address, "Prometheus scraping is off; set monitoring.prometheus: true")
    end
    if m and m.dcgm and m.prometheus then pass(address, "DCGM exporter and Prometheus on") end
  end,
}
