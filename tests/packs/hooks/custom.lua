-- custom.lua - hooks for tests/packs/hooks.rules: well-behaved and hostile ones.
function is_ls(seg) return seg.program == "ls" end
function spin(seg) while true do end end
function bomb(seg) local t = {} while true do t[#t + 1] = string.rep("x", 1000000) end end
function escape(seg) return os.execute("id") end
function decide(seg)
  if seg.argv[2] == "prod" then return "deny", "deploys to prod go through CI" end
  return "ask", "deploy to " .. tostring(seg.argv[2])
end
function wrong(seg) return {} end
