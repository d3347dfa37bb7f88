-- no_secrets.lua - true when an argument or an assignment's value carries a
-- secret: a known credential format, or a long high-entropy token.  Lua patterns
-- are not available in hooks (they backtrack), so the formats are re() regexes
-- (the rule language's dialect, matched in linear time).
--
--   hooks "std/no_secrets"
--   deny any and lua "no_secrets" "'{program}': an argument looks like a secret"

-- Known credential formats; any match anywhere in a value is a secret.
local KNOWN = {
  "A(KIA|SIA)[0-9A-Z]{16}",                            -- AWS access key id
  "gh[pousr]_[A-Za-z0-9]{36}",                         -- GitHub tokens
  "github_pat_[A-Za-z0-9_]{22,}",                      -- GitHub fine-grained token
  "xox[baprs]-[A-Za-z0-9-]{10,}",                      -- Slack
  "sk-[A-Za-z0-9_-]{20,}",                             -- OpenAI / Anthropic style
  "[sr]k_live_[A-Za-z0-9]{16,}",                       -- Stripe
  "-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----", -- PEM, OpenSSH, PGP keys
  "AIza[0-9A-Za-z_-]{35}",                             -- Google API key
  "[Bb]earer +[A-Za-z0-9._~+/-]{20,}",                 -- HTTP bearer token
  "eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.",    -- JSON Web Token
  "glpat-[A-Za-z0-9_-]{20}",                           -- GitLab
  "npm_[A-Za-z0-9]{36}",                               -- npm
}

local MIN_LEN = 20        -- shorter tokens are never judged by entropy
local RATIO = 0.85        -- base64 tokens: this share of the entropy the length allows
local HEX_BITS = 3.0      -- hex-only tokens: bits per char (at most 4)
local HEX_IDS = { [40] = true, [64] = true }  -- git object ids, SHA-256 digests: not secrets

-- The token alphabet: standard base64 without padding.  '-', '_', '.', '=' and ':'
-- separate tokens, so kebab-case names, versions and option=value pairs are not
-- read as one long token (base64url secrets are left to the formats above).
local TOKEN = {}
do
  local a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  for i = 1, #a do TOKEN[a:byte(i)] = true end
end

local function is_hex(b) return (b >= 48 and b <= 57) or (b >= 97 and b <= 102) or (b >= 65 and b <= 70) end

-- Shannon entropy of s[i..j] in bits per byte
local function entropy(s, i, j)
  local count, n = {}, j - i + 1
  for k = i, j do
    local b = s:byte(k)
    count[b] = (count[b] or 0) + 1
  end
  local h = 0
  for _, c in pairs(count) do
    local p = c / n
    h = h - p * math.log(p, 2)
  end
  return h
end

-- Is the token s[i..j] random-looking enough to be a key?
local function high_entropy(s, i, j)
  local n = j - i + 1
  if n < MIN_LEN then return false end
  local hex, digit, upper, lower = true, false, false, false
  for k = i, j do
    local b = s:byte(k)
    if not is_hex(b) then hex = false end
    if b >= 48 and b <= 57 then digit = true
    elseif b >= 65 and b <= 90 then upper = true
    elseif b >= 97 and b <= 122 then lower = true end
  end
  if hex then
    return not HEX_IDS[n] and digit and (upper or lower) and entropy(s, i, j) >= HEX_BITS
  end
  -- words, paths and identifiers rarely mix digits and both cases; random
  -- base64 of 20 or more characters nearly always does
  if not (digit and upper and lower) then return false end
  return entropy(s, i, j) >= RATIO * math.log(math.min(n, 64), 2)
end

-- Does one string carry a secret?
local function secret_in(s)
  for _, re_ in ipairs(KNOWN) do
    if re(re_, s) then return true end
  end
  local i, n = 1, #s
  while i <= n do
    if TOKEN[s:byte(i)] then
      local j = i
      while j < n and TOKEN[s:byte(j + 1)] do j = j + 1 end
      if high_entropy(s, i, j) then return true end
      i = j + 1
    else
      i = i + 1
    end
  end
  return false
end

function no_secrets(seg)
  for k = 2, #seg.argv do
    if secret_in(seg.argv[k]) then return true end
  end
  for _, a in ipairs(seg.assignments) do
    local eq = a:find("=", 1, true)
    if secret_in(eq and a:sub(eq + 1) or a) then return true end
  end
  return false
end
