-- The number built-ins written in Lua (builtins_numbers.go has round, min
-- and max). They take and give plain numbers: ints and unboxed floats alike.
local R = ...
local floor, ceil, abs = math.floor, math.ceil, math.abs

R.floor, R.ceil, R.abs = floor, ceil, abs

return R
