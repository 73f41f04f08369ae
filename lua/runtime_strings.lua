-- The string built-ins of §12 written in Lua (builtins_strings.go has
-- format and truncate). Offsets are bytes, from 0.
local R = ...
local find, sub = string.find, string.sub

function R.trim_prefix(s, p)
  if sub(s, 1, #p) == p then return sub(s, #p + 1) end
  return s
end

function R.trim_suffix(s, p)
  if #p > 0 and #p <= #s and sub(s, -#p) == p then return sub(s, 1, #s - #p) end
  return s
end

function R.index_of(s, x)
  local i = find(s, x, 1, true)
  if i == nil then return -1 end
  return i - 1
end

return R
