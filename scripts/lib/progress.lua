-- Progress of long commands, on stderr, in one of three ways:
--   * on a terminal: a status line replaced in place; while it shows, print()
--     erases it first, so results never land after half a status line;
--   * when stderr is a file or a pipe: one line per stage ("frugal workflow:
--     profiling"), so a log shows where a long run is;
--   * nothing with --quiet.
--
--   local progress = require("progress").new(a.quiet)
--   progress:stage("profiling")            -- a stage: the status line, or a log line
--   progress:status("layer 3/20")          -- a detail: the status line only
--   progress:done()                        -- erases the status line
-- progress.mode is "terminal", "lines" or "quiet"; frugal.profile follows the
-- same rule with its option progress = (progress.mode ~= "quiet").
local M = {}

local function command_name()
  return ((arg and arg[0] or ""):match("([^/]+)%.lua$")) or "script"
end

function M.new(quiet)
  local mode = quiet and "quiet" or (frugal.isatty("stderr") and "terminal" or "lines")
  local p = {mode = mode, showing = false}
  local prefix = "frugal " .. command_name() .. ": "

  function p:status(text)
    if self.mode ~= "terminal" then return end
    -- Cut to the terminal's width: a wrapped line would not be erased by "\r".
    local columns = frugal.terminal_columns("stderr")
    if columns and columns > 1 then text = text:sub(1, columns - 1) end
    io.stderr:write("\r", text, "\27[K")
    io.stderr:flush()
    self.showing = true
  end

  function p:stage(text)
    if self.mode == "lines" then
      io.stderr:write(prefix, text, "\n")
      io.stderr:flush()
    else
      self:status(text)
    end
  end

  function p:done()
    if not self.showing then return end
    io.stderr:write("\r\27[K")
    io.stderr:flush()
    self.showing = false
  end

  if mode == "terminal" then
    local raw_print = print
    print = function(...)  -- luacheck: ignore (global on purpose: every print of the script)
      p:done()
      raw_print(...)
    end
  end
  return p
end

return M
