-- SOC 2 CC6.1 / CC6.2 / CC6.3: role-based access with least privilege.

local function has(list, value)
  for _, v in ipairs(list) do if v == value then return true end end
  return false
end

-- The role's resource: access.role.NAME (recorded only), or kubernetes.role.NAME
-- when the blueprint declares a cluster and the role is applied there.
local function role_address(ctx, r)
  local applied = "kubernetes.role." .. r.name
  if ctx.resource(applied) then return applied end
  return "access.role." .. r.name
end

policy {
  id = "SOC2-RBAC-001",
  title = "Roles grant no wildcard verbs or resources",
  description = "No role lists '*' among its verbs or resources; grant the verbs and resources the job needs. Does not prove the grants are reviewed or still needed (CC6.2, CC6.3 ask for that too).",
  severity = "high",
  enforcement = "mandatory",
  controls = { soc2 = { "CC6.1", "CC6.3" }, hipaa = { "164.308(a)(4)(ii)(B)" } },
  check = function(ctx)
    local roles = ctx.blueprint.access.roles
    for _, r in ipairs(roles) do
      if has(r.verbs, "*") then
        fail(role_address(ctx, r), "role '" .. r.name .. "' grants every verb ('*'); list the verbs it needs, e.g. get, list, create")
      end
      if has(r.resources, "*") then
        fail(role_address(ctx, r), "role '" .. r.name .. "' applies to every resource ('*'); list the resources it needs, e.g. jobs, pods/log")
      end
      if not has(r.verbs, "*") and not has(r.resources, "*") then
        pass(role_address(ctx, r), "verbs " .. table.concat(r.verbs, ", ") .. " on " .. table.concat(r.resources, ", "))
      end
    end
    if #roles == 0 then not_applicable(nil, "the blueprint grants no roles") end
  end,
}

-- Verbs that let a holder grant itself more than it was given.
local escalating = { escalate = true, bind = true, impersonate = true }

policy {
  id = "SOC2-RBAC-002",
  title = "No cluster-admin or privilege-escalating roles for groups",
  description = "Groups never hold cluster-admin, nor a role with the escalate, bind or impersonate verbs; grant those to named break-glass users only. Does not prove who is in the groups bound to other roles.",
  severity = "critical",
  enforcement = "mandatory",
  controls = { soc2 = { "CC6.1", "CC6.3" }, hipaa = { "164.312(a)(1)" } },
  check = function(ctx)
    local roles = ctx.blueprint.access.roles
    for _, r in ipairs(roles) do
      local powerful = r.name == "cluster-admin"
      for _, v in ipairs(r.verbs) do if escalating[v] then powerful = true end end
      local ok = true
      if powerful then
        for _, s in ipairs(r.subjects) do
          if string.sub(s, 1, 6) == "group:" then
            ok = false
            fail(role_address(ctx, r), "role '" .. r.name .. "' gives cluster-admin-level power to " .. s .. "; bind it to named users, not groups")
          end
        end
      end
      if ok then
        pass(role_address(ctx, r), powerful and ("privileged role bound to named subjects: " .. table.concat(r.subjects, ", "))
                                     or "no cluster-admin, escalate, bind or impersonate")
      end
    end
    if #roles == 0 then not_applicable(nil, "the blueprint grants no roles") end
  end,
}

policy {
  id = "SOC2-RBAC-003",
  title = "One service account per workload",
  description = "A service account name is declared in one namespace only; roles bind service accounts that exist (serviceaccount:NAMESPACE/NAME) and only in their own namespace, so no token is shared across workloads. Does not prove each workload runs under its own account; it checks what the blueprint binds.",
  severity = "high",
  enforcement = "mandatory",
  controls = { soc2 = { "CC6.1", "CC6.2" }, hipaa = { "164.312(a)(2)(i)" } },
  check = function(ctx)
    local owner = {}  -- service account name -> first namespace declaring it
    local declared = {}  -- "ns/name" -> true
    local failures = 0
    local real_fail = fail
    local function fail(address, message) failures = failures + 1; real_fail(address, message) end
    for _, ns in ipairs(ctx.blueprint.access.namespaces) do
      for _, sa in ipairs(ns.service_accounts) do
        declared[ns.name .. "/" .. sa] = true
        if owner[sa] and owner[sa] ~= ns.name then
          fail(ctx.resource("kubernetes.namespace." .. ns.name) and "kubernetes.namespace." .. ns.name or "access.namespace." .. ns.name, "service account '" .. sa .. "' is also declared in namespace '" .. owner[sa] .. "'; give each workload its own service account")
        else
          owner[sa] = ns.name
        end
      end
    end
    for _, r in ipairs(ctx.blueprint.access.roles) do
      for _, s in ipairs(r.subjects) do
        local ns, name = string.match(s, "^serviceaccount:([^/]+)/(.+)$")
        if string.sub(s, 1, 15) == "serviceaccount:" and not ns then
          fail(role_address(ctx, r), "subject '" .. s .. "' must name its namespace: serviceaccount:NAMESPACE/NAME")
        elseif ns and not declared[ns .. "/" .. name] then
          fail(role_address(ctx, r), "subject '" .. s .. "' is not a service account declared in namespace '" .. ns .. "'")
        elseif ns then
          for _, target in ipairs(r.namespaces) do
            if target ~= ns then
              fail(role_address(ctx, r), "service account " .. ns .. "/" .. name .. " is granted access to namespace '" .. target .. "'; a service account serves one workload in its own namespace")
            end
          end
        end
      end
    end
    if failures == 0 then
      local n = 0
      for _ in pairs(declared) do n = n + 1 end
      if n == 0 then not_applicable(nil, "the blueprint declares no service accounts")
      else pass(nil, n .. " service account(s), each declared in one namespace and bound only there") end
    end
  end,
}
