-- Status lines for long steps, on stderr and only when stderr is a terminal
-- (a pipe or a log file gets nothing, so output stays clean and diffable).
--
--   local progress = require("progress").new()   -- or .new(false) to silence
--   progress:status("profiling layer 3/20")      -- replaces the previous line
--   progress:done()                              -- erases it
local M = {}

function M.new(enabled)
  if enabled == nil then enabled = frugal.isatty("stderr") end
  local p = {enabled = enabled}
  function p:status(text)
    if self.enabled then
      io.stderr:write("\r", text, "\27[K")
      io.stderr:flush()
    end
  end
  function p:done()
    if self.enabled then
      io.stderr:write("\r\27[K")
      io.stderr:flush()
    end
  end
  return p
end

return M
