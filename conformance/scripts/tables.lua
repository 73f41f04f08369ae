-- Builds the tables Fluent Bit users build: a list with a hole, a table
-- indexed by status class (integer keys: Fluent Bit makes it an array up to
-- the largest), a list of lists, a status rewritten with gsub, a field
-- removed.
function cb(tag, timestamp, record)
  local parts = {}
  for p in string.gmatch(record["path"], "[^/]+") do parts[#parts + 1] = p end
  parts[#parts + 2] = "end"
  record["parts"] = parts
  record["by_class"] = {[2] = "ok", [5] = "error"}
  record["matrix"] = {{1, 2}, {3}}
  record["status"] = string.gsub(record["status"], "^5", "E")
  record["path"] = nil
  return 2, timestamp, record
end
