// A Lua 5.4 state with the standard libraries and the `frugal` module (global
// and require-able), and the way the CLI runs scripts in it: `arg` set as the
// stand-alone lua interpreter sets it, errors reported as "file:line: message"
// plus a traceback. The Lua heap is capped (half the machine's memory, or
// FRUGAL_LUA_MEMORY bytes) so a runaway script gets "not enough memory", not
// the OOM killer.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <lua.hpp>
#include <string>
#include <vector>

namespace frugal {

class LuaRunner {
 public:
  LuaRunner();
  ~LuaRunner();
  LuaRunner(const LuaRunner&) = delete;
  LuaRunner& operator=(const LuaRunner&) = delete;

  lua_State* state() const { return L_; }

  // Runs a script file: arg[0] = path, arg[1..] = args, arg[-1] = "frugal"; the
  // args are also the chunk's `...`. Returns 0, or 1 after writing
  // "frugal: <message>\n<traceback>" to `err` (and to last_error()).
  // os.exit in the script ends the process, as in lua.
  int run_file(const std::string& path, const std::vector<std::string>& args);
  // Same for a chunk of code; `chunkname` names it in messages.
  int run_string(const std::string& code, const std::string& chunkname, const std::vector<std::string>& args);

  // Where errors go (std::cerr by default).
  void set_error_stream(std::ostream* err) { err_ = err; }
  // Tracebacks (on by default) are for errors in a user's own script. Off,
  // as for the built-in commands, an error is one line without the script
  // position or the binding's name: "frugal: cannot open 'x.onnx': ...".
  void set_tracebacks(bool on) { tracebacks_ = on; }
  // Sets frugal.debug, which scripts read (true: let errors through with
  // their tracebacks instead of one-line messages).
  void set_debug(bool on);
  // The message and traceback of the last failure, "" after a success.
  const std::string& last_error() const { return last_error_; }

 private:
  int run_loaded(int load_status, const std::string& script, const std::vector<std::string>& args);

  struct HeapLimit {
    size_t used = 0, limit = 0;
  };
  static void* allocate(void* ud, void* ptr, size_t old_size, size_t new_size);

  HeapLimit heap_;
  lua_State* L_ = nullptr;
  std::ostream* err_;
  std::string last_error_;
  bool tracebacks_ = true;
};

// An error message for people: without a leading "script.lua:12: " and a
// binding's name ("frugal.load: ", "executor:run: ").
std::string user_error_message(const std::string& message);

}  // namespace frugal
