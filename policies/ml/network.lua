-- ML practice: training and inference traffic runs on its own VLAN and VRF,
-- apart from management networks. SOC 2 CC6.1 (point of focus "Considers network
-- segmentation": unrelated portions of the system are isolated from each other)
-- and CC6.6 (point of focus "Implements boundary protection systems").

policy {
  id = "ML-NET-001",
  title = "ML traffic is on a dedicated VLAN and VRF",
  description = "Every training or inference node pool joins a VLAN whose purpose is its role (training or inference) and whose VRF is not shared with a management VLAN: network segmentation (SOC 2 CC6.1, point of focus 'Considers network segmentation') and a routing boundary between ML and management traffic (CC6.6, 'Implements boundary protection systems'). Does not prove the switches enforce the separation; it checks the declared VLANs and VRFs.",
  severity = "medium",
  enforcement = "advisory",
  controls = { soc2 = { "CC6.1", "CC6.6" }, gdpr = { "Art.32(1)(b)" } },
  check = function(ctx)
    local vlans, mgmt_vrf = {}, {}
    for _, v in ipairs(ctx.blueprint.networks.vlans) do
      vlans[v.name] = v
      if v.purpose == "management" and v.vrf then mgmt_vrf[v.vrf] = true end
    end
    local any = false
    for _, p in ipairs(ctx.blueprint.node_pools) do
      if p.role == "training" or p.role == "inference" then
        any = true
        local ok, shared = false, nil
        for _, n in ipairs(p.networks) do
          local v = vlans[n]
          if v and v.purpose == p.role and v.vrf then
            if mgmt_vrf[v.vrf] then shared = v.name elseif not ok then ok = v end
          end
        end
        local address = "baremetal.node." .. p.name
        if shared and not ok then
          fail(address, "pool '" .. p.name .. "' carries " .. p.role .. " traffic on VLAN '" .. shared .. "', whose VRF is shared with management; give ML traffic its own VRF")
        elseif not ok then
          fail(address, "pool '" .. p.name .. "' joins no VLAN with purpose " .. p.role .. " and a VRF; add one under networks.vlans and list it in the pool's networks")
        else
          pass(address, p.role .. " traffic on VLAN '" .. ok.name .. "' (id " .. ok.id .. ") in VRF '" .. ok.vrf .. "', apart from management")
        end
      end
    end
    if not any then not_applicable(nil, "no training or inference node pool") end
  end,
}
