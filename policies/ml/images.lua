-- ML practice / supply chain: container images are pinned by digest so the
-- bits that run are the bits that were reviewed.

policy {
  id = "ML-IMG-001",
  title = "Container images are pinned by digest",
  description = "Every image of every stack ends in @sha256: followed by 64 hex digits; tags such as :latest can change under you. Does not prove the images are free of vulnerabilities or come from a trusted registry.",
  severity = "high",
  enforcement = "mandatory",
  controls = { soc2 = { "CC8.1", "CC7.1" } },
  check = function(ctx)
    local names = {}
    for name in pairs(ctx.blueprint.stacks) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      local s = ctx.blueprint.stacks[name]
      local pinned = 0
      for _, image in ipairs(s.images) do
        local digest = string.match(image, "@sha256:(%x+)$")
        if not digest or #digest ~= 64 then
          fail("plinth.stack." .. name, "image '" .. image .. "' of stack '" .. name .. "' is not pinned by digest; use NAME@sha256:<64 hex digits>")
        else
          pinned = pinned + 1
        end
      end
      if pinned == #s.images then pass("plinth.stack." .. name, pinned .. " image(s), all pinned by sha256 digest") end
    end
    if #names == 0 then not_applicable(nil, "the blueprint declares no stacks") end
  end,
}
