-- HIPAA 45 CFR 164.312(a)(1) access control and (a)(2)(i) unique user
-- identification: every grant names identifiable subjects.

local anonymous = {
  ["*"] = true, ["group:*"] = true, ["user:*"] = true,
  ["group:system:unauthenticated"] = true, ["group:system:authenticated"] = true, ["user:system:anonymous"] = true,
}

policy {
  id = "HIPAA-ACC-001",
  title = "Access is granted only to identified subjects",
  description = "Role subjects are group:NAME, user:NAME or serviceaccount:NAMESPACE/NAME, and never anonymous, all-authenticated or wildcard identities. Does not prove identities are unique per person or that emergency access exists (164.312(a)(2)(i)-(ii)); it rules out anonymous and wildcard subjects.",
  severity = "critical",
  enforcement = "mandatory",
  controls = { hipaa = { "164.312(a)(1)", "164.312(a)(2)(i)" }, soc2 = { "CC6.2" } },
  check = function(ctx)
    local roles = ctx.blueprint.access.roles
    for _, r in ipairs(roles) do
      local ok = true
      for _, s in ipairs(r.subjects) do
        local kind = string.match(s, "^(%a+):.+$")
        if anonymous[s] then
          ok = false
          fail("access.role." .. r.name, "role '" .. r.name .. "' is granted to '" .. s .. "', which identifies no one; name the groups, users or service accounts")
        elseif kind ~= "group" and kind ~= "user" and kind ~= "serviceaccount" then
          ok = false
          fail("access.role." .. r.name, "subject '" .. s .. "' of role '" .. r.name .. "' is not group:NAME, user:NAME or serviceaccount:NAMESPACE/NAME")
        end
      end
      if ok then pass("access.role." .. r.name, "granted to " .. table.concat(r.subjects, ", ")) end
    end
    if #roles == 0 then not_applicable(nil, "the blueprint grants no roles") end
  end,
}
