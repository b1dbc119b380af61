-- ML practice / supply chain: container images are pinned by digest so the
-- bits that run are the bits that were reviewed.

policy {
  id = "ML-IMG-001",
  title = "Container images are pinned by digest",
  description = "Every image of every stack ends in @sha256: followed by 64 hex digits; tags such as :latest can change under you.",
  severity = "high",
  enforcement = "mandatory",
  controls = { soc2 = { "CC8.1", "CC7.1" } },
  check = function(ctx)
    for name, s in pairs(ctx.blueprint.stacks) do
      for _, image in ipairs(s.images) do
        local digest = string.match(image, "@sha256:(%x+)$")
        if not digest or #digest ~= 64 then
          fail("plinth.stack." .. name, "image '" .. image .. "' of stack '" .. name .. "' is not pinned by digest; use NAME@sha256:<64 hex digits>")
        end
      end
    end
  end,
}
