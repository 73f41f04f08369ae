-- The time built-ins written in Lua (builtins_time.go has the others).
-- Timestamps are {seconds, nanoseconds}, the nanoseconds in [0, 1e9).
local R = ...
local floor = math.floor

function R.unix_seconds(t) return t[1] end
function R.unix_millis(t) return t[1] * 1000 + floor(t[2] / 1000000) end

return R
