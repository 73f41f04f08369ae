-- The number built-ins written in Lua (builtins_numbers.go has round). They
-- take and give plain numbers: ints and unboxed floats alike.
local R = ...
local floor, ceil, abs = math.floor, math.ceil, math.abs

R.floor, R.ceil, R.abs = floor, ceil, abs
function R.min(a, b) if b < a then return b end return a end
function R.max(a, b) if b > a then return b end return a end

return R
