-- The array built-ins written in Lua, and a + b on arrays (acat);
-- builtins_collections.go has includes and unique. Elements are copied
-- (cp), so that a result is a snapshot, as the VM's is. An array of more
-- than MAXELEMS elements could never be stored in a record:
-- record_too_large.
local R = ...
local cp, NULL, ARR, fault, clamp = R.cp, R.NULL, R.ARR, R.fault, R.clamp
local setmetatable = setmetatable
local MAXELEMS = R.MAXELEMS

function R.acat(a, b)
  local out, n = setmetatable({}, ARR), #a
  if n + #b > MAXELEMS then fault("record_too_large") end
  for i = 1, n do out[i] = cp(a[i]) end
  for i = 1, #b do out[n + i] = cp(b[i]) end
  return out
end

function R.append(a, v)
  local out, n = setmetatable({}, ARR), #a
  if n + 1 > MAXELEMS then fault("record_too_large") end
  for i = 1, n do out[i] = cp(a[i]) end
  if v == nil then v = NULL end -- as in a list literal
  out[n + 1] = cp(v)
  return out
end

function R.slice(a, i, j)
  i, j = clamp(i, j, #a)
  local out = setmetatable({}, ARR)
  for k = i + 1, j do out[k - i] = cp(a[k]) end
  return out
end

return R
