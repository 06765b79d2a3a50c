-- A script-level check of the tensor API as a Torch7 user would write it. The
-- references are computed here in plain Lua. Run by cli_tests through the
-- frugal executable; prints "torch_style: ok" and exits 0 when every check holds.
local function check(cond, what)
  if not cond then error("check failed: " .. what, 2) end
end

-- A 3x4 matrix filled through set(), read back in C order through reshape().
local rows, cols = 3, 4
local m = frugal.tensor(rows, cols)
for i = 1, rows do
  for j = 1, cols do m:set(i, j, i * 100 + j) end
end
local flat = m:reshape(rows * cols)
for i = 1, rows do
  for j = 1, cols do
    check(flat[(i - 1) * cols + j] == i * 100 + j, "C order at " .. i .. "," .. j)
  end
end

-- Matrix-vector product in Lua on tensor values vs the same on plain tables.
local v = frugal.tensor({1, -2, 0.5, 4})
local plain_m, plain_v = m:totable(), v:totable()
for i = 1, rows do
  local a, b = 0, 0
  for j = 1, cols do
    a = a + m:get(i, j) * v[j]
    b = b + plain_m[i][j] * plain_v[j]
  end
  check(a == b, "row " .. i .. " dot product")
end

-- size() is a table, size(k) a number, #t the first size.
local t = frugal.zeros{2, 3, 5}
check(#t:size() == 3 and t:size(3) == 5 and #t == 2 and t:dim() == 3, "sizes")
check(t:numel() == 30, "numel")

-- fill returns the tensor, so calls chain; clone copies.
local ones = frugal.tensor(4):fill(1)
local copy = ones:clone():fill(2)
check(ones:sum() == 4 and copy:sum() == 8, "fill/clone")

-- print shows the values and the size line.
local s = tostring(frugal.tensor({{1, 2}, {3, 4}}))
check(s:find("[frugal.FloatTensor of size 2x2]", 1, true) ~= nil, "tostring size line")

-- Errors are catchable and name the call.
local ok, err = pcall(function() return m:get(4, 1) end)
check(not ok and err:find("tensor:get: index 4 out of range for dimension 1", 1, true), "bounds error")

print("torch_style: ok")
