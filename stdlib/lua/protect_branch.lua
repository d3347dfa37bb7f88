-- protect_branch.lua - true for a `git push` that would update or delete a
-- protected branch: `git push origin main`, `HEAD:main`, `+main`,
-- `HEAD:refs/heads/master`, `:main` (deletion), `--delete main`, and `--all` or
-- `--mirror` (they push every branch), with or without --force, -f or
-- --force-with-lease.  A push that names no refspec pushes the current branch,
-- which a hook cannot see: it is not matched (pair with a rule if that matters).
--
--   hooks "std/protect_branch"
--   deny program git and lua "protect_branch" "pushing to a protected branch needs a person"

local PROTECTED = { main = true, master = true }

-- git push options that take the next word as their value
local TAKES_VALUE = { ["--repo"] = true, ["--receive-pack"] = true, ["--exec"] = true,
                      ["-o"] = true, ["--push-option"] = true }
-- git's global options that take the next word as their value
local GLOBAL_VALUE = { ["-C"] = true, ["-c"] = true, ["--git-dir"] = true,
                       ["--work-tree"] = true, ["--namespace"] = true }

local function starts(s, prefix) return s:sub(1, #prefix) == prefix end

-- The branch a refspec's destination names, or nil.
local function destination(spec)
  if starts(spec, "+") then spec = spec:sub(2) end
  local colon = spec:find(":", 1, true)
  local dst = colon and spec:sub(colon + 1) or spec
  if starts(dst, "refs/heads/") then dst = dst:sub(12) end
  return dst
end

function protect_branch(seg)
  if seg.program ~= "git" then return false end
  local argv = seg.argv
  -- find `push`: the subcommand, after git's global options
  local k = 2
  while k <= #argv and starts(argv[k], "-") do
    if GLOBAL_VALUE[argv[k]] then k = k + 1 end
    k = k + 1
  end
  if argv[k] ~= "push" then return false end
  local positional = 0
  k = k + 1
  while k <= #argv do
    local a = argv[k]
    if a == "--" then
      k = k + 1
      break
    elseif a == "--all" or a == "--mirror" or a == "--branches" then
      return true
    elseif TAKES_VALUE[a] then
      k = k + 1
    elseif starts(a, "-") then
      -- --force, -f, --force-with-lease[=...], --delete, -d, -u, -fu, ...: a
      -- deletion names its branch as a refspec, so it is checked like a push
    else
      positional = positional + 1
      if positional > 1 and PROTECTED[destination(a)] then return true end
    end
    k = k + 1
  end
  for i = k, #argv do                 -- after "--": remote, then refspecs
    positional = positional + 1
    if positional > 1 and PROTECTED[destination(argv[i])] then return true end
  end
  return false
end
