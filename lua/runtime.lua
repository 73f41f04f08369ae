-- The run-time support of transpiled policies. It runs once per LState and
-- returns the table R that every transpiled policy receives. The Go side
-- (builtins.go, state.go) adds its helpers, limits and fault markers to R
-- before this chunk runs.
--
-- Values: absent is nil, null is NULL, ints are numbers, floats are boxed
-- ({x} with metatable FLT) so that a float stays a float through the record,
-- bytes are {s} with BYT, timestamps {sec, nsec} with TS, arrays have ARR and
-- maps MAP; a map keeps its key order in m[ORD].
local R = ...
local type, getmetatable, setmetatable, error = type, getmetatable, setmetatable, error
local tremove = table.remove

local NULL = setmetatable({}, {__name = "null"})
local FLT, BYT, TS, ARR, MAP = {}, {}, {}, {}, {}
local ORD = {}
R.NULL, R.FLT, R.BYT, R.TS, R.ARR, R.MAP, R.ORD = NULL, FLT, BYT, TS, ARR, MAP, ORD

-- The Go side sets, from package spec: FAULTS, one marker table per fault
-- reason, which the Go side maps back to the reason; MAXSTR, the longest
-- string a policy may build; MAXITER, the elements the loops of one run
-- may visit.
local FAULTS = R.FAULTS
local function fault(r) error(FAULTS[r], 0) end
R.fault = fault

local MAXSTR = R.MAXSTR

function R.newmap() return setmetatable({[ORD] = {}}, MAP) end
local newmap = R.newmap
function R.newarr(t) return setmetatable(t, ARR) end
function R.box(x) if type(x) == "number" then return setmetatable({x}, FLT) end return x end
function R.unbox(v) if type(v) == "table" and getmetatable(v) == FLT then return v[1] end return v end
function R.ts(sec, nsec) return setmetatable({sec, nsec}, TS) end
function R.isnil(v) return v == nil or v == NULL end

-- ST.e says whether the run changed the record: the Go side converts the
-- table back only then (an unchanged record keeps its source spelling).
local ST = {e = false}
R.ST = ST

-- madd adds key k to a map being built (a literal): not a record edit.
function R.madd(m, k, v)
  if v == nil then return end
  if m[k] == nil then local o = m[ORD]; o[#o + 1] = k end
  m[k] = v
end

-- mset writes key k of map m, keeping the key order; v == nil removes.
local function mdel(m, k)
  if m[k] == nil then return end
  ST.e = true
  m[k] = nil
  local o = m[ORD]
  for i = 1, #o do
    if o[i] == k then tremove(o, i) return end
  end
end
local function mset(m, k, v)
  if v == nil then return mdel(m, k) end
  ST.e = true
  if m[k] == nil then local o = m[ORD]; o[#o + 1] = k end
  m[k] = v
end
R.mset, R.mdel = mset, mdel

-- get reads key k of x, absent when x is not a map.
local function get(x, k)
  if type(x) == "table" and getmetatable(x) == MAP then return x[k] end
  return nil
end
-- idx reads element i (from 0, negative from the end) of x.
local function idx(x, i)
  if type(x) == "table" and getmetatable(x) == ARR then
    local n = #x
    if i < 0 then i = i + n end
    if i < 0 or i >= n then return nil end
    return x[i + 1]
  end
  return nil
end
R.get, R.idx = get, idx

-- kind names a value's kind as type_of does; absent is "absent".
local function kind(v)
  local t = type(v)
  if t == "number" then return "int" end
  if t == "string" then return "string" end
  if t == "boolean" then return "bool" end
  if t == "nil" then return "absent" end
  if v == NULL then return "null" end
  local mt = getmetatable(v)
  if mt == MAP then return "map" end
  if mt == ARR then return "array" end
  if mt == FLT then return "float" end
  if mt == TS then return "timestamp" end
  if mt == BYT then return "bytes" end
  return "?"
end
R.kind = kind

-- chk faults unless v has kind k ("any" accepts everything); opt also
-- accepts absent and null.
function R.chk(v, k, opt)
  if v == nil or v == NULL then
    if opt or k == "null" or (k == "any" and v == NULL) then return v end
    fault("type_mismatch")
  end
  if k == "any" then return v end
  local vk = kind(v)
  if vk ~= k and not (k == "float" and vk == "int") then fault("type_mismatch") end
  return v
end

-- cp copies maps and arrays deeply: a stored value behaves as a copy.
local function cp(v)
  if type(v) ~= "table" then return v end
  local mt = getmetatable(v)
  if mt == MAP then
    local o, n = v[ORD], newmap()
    local no = n[ORD]
    for i = 1, #o do local k = o[i]; no[i] = k; n[k] = cp(v[k]) end
    return n
  elseif mt == ARR then
    local n = setmetatable({}, ARR)
    for i = 1, #v do n[i] = cp(v[i]) end
    return n
  end
  return v
end
R.cp = cp

-- Paths of edits are arrays of steps: strings are keys, numbers indexes.
local function step(x, s)
  if type(s) == "string" then return get(x, s) end
  return idx(x, s)
end
function R.lookup(root, p)
  local x = root
  for i = 1, #p do
    x = step(x, p[i])
    if x == nil then return nil end
  end
  return x
end

-- parent walks to the container of p's last step, creating missing or null
-- maps; a step through anything else is a path_conflict.
local function parent(root, p)
  local x = root
  for i = 1, #p - 1 do
    local s = p[i]
    local c
    if type(s) == "string" then
      if getmetatable(x) ~= MAP then fault("path_conflict") end
      c = x[s]
      if c == nil or c == NULL then c = newmap(); mset(x, s, c) end
    else
      if getmetatable(x) ~= ARR then fault("path_conflict") end
      c = idx(x, s)
      if c == nil then fault("path_conflict") end
      if c == NULL then c = newmap(); local n = #x; x[(s < 0 and s + n or s) + 1] = c; ST.e = true end
    end
    if type(c) ~= "table" or (getmetatable(c) ~= MAP and getmetatable(c) ~= ARR) then
      fault("path_conflict")
    end
    x = c
  end
  return x
end

local remp
function R.setp(root, p, v)
  if v == nil then return remp(root, p) end -- set P = absent removes P
  local x = parent(root, p)
  local s = p[#p]
  if type(s) == "string" then
    if getmetatable(x) ~= MAP then fault("path_conflict") end
    mset(x, s, v)
  else
    if getmetatable(x) ~= ARR then fault("path_conflict") end
    local n = #x
    local i = s < 0 and s + n or s
    if i < 0 or i >= n then fault("path_conflict") end
    if v == nil then tremove(x, i + 1) else x[i + 1] = v end
    ST.e = true
  end
end

-- remp removes p; absent paths and paths through scalars do nothing.
function remp(root, p)
  local x = root
  for i = 1, #p - 1 do
    x = step(x, p[i])
    if x == nil then return end
  end
  local s = p[#p]
  if type(s) == "string" then
    if type(x) == "table" and getmetatable(x) == MAP then mdel(x, s) end
  elseif type(x) == "table" and getmetatable(x) == ARR then
    local n = #x
    local i = s < 0 and s + n or s
    if i >= 0 and i < n then tremove(x, i + 1); ST.e = true end
  end
end
R.remp = remp

function R.rename(root, from, to)
  local v = R.lookup(root, from)
  if v == nil then return end
  remp(root, from)
  R.setp(root, to, v)
end

function R.lift(root, p, prefix)
  local v = R.lookup(root, p)
  if v == nil or v == NULL then return end
  if type(v) ~= "table" or getmetatable(v) ~= MAP then fault("type_mismatch") end
  remp(root, p)
  local x = parent(root, p)
  local o = v[ORD]
  for i = 1, #o do
    local k = o[i]
    mset(x, prefix .. k, v[k])
  end
end

-- Arithmetic with the VM's rules.
local floor, ceil, huge = math.floor, math.ceil, 1 / 0
local function fin(x)
  if x ~= x or x == huge or x == -huge then fault("non_finite") end
  return x
end
R.fin = fin
function R.idiv(a, b)
  if b == 0 then fault("division_by_zero") end
  local q = a / b
  if q >= 0 then return floor(q) end
  return ceil(q)
end
function R.imod(a, b)
  if b == 0 then fault("division_by_zero") end
  local q = a / b
  if q >= 0 then q = floor(q) else q = ceil(q) end
  return a - q * b
end
function R.fdiv(a, b)
  if b == 0 then fault("division_by_zero") end
  return fin(a / b)
end
local gofmod = R.gofmod
function R.fmod(a, b)
  if b == 0 then fault("division_by_zero") end
  return fin(gofmod(a, b))
end
function R.cat(a, b)
  if #a + #b > MAXSTR then fault("string_too_long") end
  return a .. b
end
function R.slen(s)
  if #s > MAXSTR then fault("string_too_long") end
  return s
end

-- Timestamps compare by seconds, then nanoseconds.
function R.tlt(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end
function R.tle(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] <= b[2]) end

-- eq is == over values of any kind: absent and null are equal, an int
-- equals a float of the same value, containers compare deeply.
local function num(v)
  if type(v) == "number" then return v end
  if type(v) == "table" and getmetatable(v) == FLT then return v[1] end
  return nil
end
local function eq(a, b)
  if a == nil then a = NULL end
  if b == nil then b = NULL end
  if a == b then return true end
  local na, nb = num(a), num(b)
  if na ~= nil or nb ~= nil then return na ~= nil and nb ~= nil and na == nb end
  local ta, tb = type(a), type(b)
  if ta ~= "table" or tb ~= "table" then return false end
  local ma, mb = getmetatable(a), getmetatable(b)
  if ma ~= mb then return false end
  if ma == MAP then
    local oa, ob = a[ORD], b[ORD]
    if #oa ~= #ob then return false end
    for i = 1, #oa do
      local k = oa[i]
      if b[k] == nil or not eq(a[k], b[k]) then return false end
    end
    return true
  elseif ma == ARR then
    if #a ~= #b then return false end
    for i = 1, #a do
      if not eq(a[i], b[i]) then return false end
    end
    return true
  elseif ma == TS then
    return a[1] == b[1] and a[2] == b[2]
  elseif ma == BYT then
    return a[1] == b[1]
  end
  return false
end
R.eq = eq

function R.len(v)
  if type(v) == "string" then return #v end
  if getmetatable(v) == MAP then return #v[ORD] end
  return #v
end
function R.keys(m)
  local o, a = m[ORD], setmetatable({}, ARR)
  for i = 1, #o do a[i] = o[i] end
  return a
end
-- clamp clamps the start i and end j of substr and slice to [0, n].
local function clamp(i, j, n)
  if i < 0 then i = 0 elseif i > n then i = n end
  if j < 0 then j = 0 elseif j > n then j = n end
  return i, j
end
R.clamp = clamp
function R.substr(s, i, j)
  i, j = clamp(i, j, #s)
  if i >= j then return "" end
  return s:sub(i + 1, j)
end
local find, sub = string.find, string.sub
function R.contains(s, x) return find(s, x, 1, true) ~= nil end
function R.starts_with(s, p) return sub(s, 1, #p) == p end
function R.ends_with(s, p) return #p == 0 or sub(s, -#p) == p end
function R.unix_nanos(t) return t[1] * 1000000000 + t[2] end

local function as(k)
  return function(v) if kind(v) == k then return v end return NULL end
end
R.as_string, R.as_int, R.as_float, R.as_bool = as("string"), as("int"), as("float"), as("bool")
R.as_map, R.as_array = as("map"), as("array")
local function is(k) return function(v) return kind(v) == k end end
R.is_string, R.is_int, R.is_float, R.is_bool = is("string"), is("int"), is("float"), is("bool")
R.is_map, R.is_array, R.is_timestamp = is("map"), is("array"), is("timestamp")
function R.is_null(v) return v == nil or v == NULL end
function R.type_of(v)
  local k = kind(v)
  if k == "absent" then return "null" end
  return k
end

return R
