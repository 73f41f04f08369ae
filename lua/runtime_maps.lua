-- The map built-ins written in Lua (builtins_collections.go has
-- unflatten). They build new maps and arrays; values are copied (cp), so
-- that a result behaves as a snapshot, as the VM's do.
local R = ...
local newmap, cp, fault, matches = R.newmap, R.cp, R.fault, R.matches
local ORD, MAP, ARR = R.ORD, R.MAP, R.ARR
local getmetatable, setmetatable, type = getmetatable, setmetatable, type
local MAXSTR = R.MAXSTR

-- put adds key k with value v to out, whose key order is o of length n: a
-- key added twice keeps its first place and its last value.
local function put(out, o, n, k, v)
  if out[k] == nil then n = n + 1; o[n] = k end
  out[k] = v
  return n
end

function R.merge(a, b)
  local out = newmap()
  local o, n = out[ORD], 0
  local ao, bo = a[ORD], b[ORD]
  for i = 1, #ao do local k = ao[i]; n = put(out, o, n, k, cp(a[k])) end
  for i = 1, #bo do local k = bo[i]; n = put(out, o, n, k, cp(b[k])) end
  return out
end

local function flat(out, o, n, prefix, m, sep)
  local mo = m[ORD]
  for i = 1, #mo do
    local k = mo[i]
    local v = m[k]
    if prefix ~= nil then
      k = prefix .. sep .. k
      if #k > MAXSTR then fault("string_too_long") end
    end
    if type(v) == "table" and getmetatable(v) == MAP and #v[ORD] > 0 then
      n = flat(out, o, n, k, v, sep)
    else
      n = put(out, o, n, k, cp(v))
    end
  end
  return n
end

function R.flatten(m, sep)
  local out = newmap()
  flat(out, out[ORD], 0, nil, m, sep)
  return out
end

local function keep(m, re, want)
  local out = newmap()
  local o, n, mo = out[ORD], 0, m[ORD]
  for i = 1, #mo do
    local k = mo[i]
    if matches(k, re) == want then n = n + 1; o[n] = k; out[k] = cp(m[k]) end
  end
  return out
end
function R.keep_keys(m, re) return keep(m, re, true) end
function R.drop_keys(m, re) return keep(m, re, false) end

function R.values(m)
  local out, mo = setmetatable({}, ARR), m[ORD]
  for i = 1, #mo do out[i] = cp(m[mo[i]]) end
  return out
end

return R
