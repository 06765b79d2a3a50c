// The frugal executable. Every sub-command is a Lua script in script_dir():
//   frugal CMD [args]          runs scripts/CMD.lua
//   frugal SCRIPT.lua [args]   runs any script, with `arg` set as lua does
//   frugal -e CODE [args]      runs a chunk of Lua
//   frugal --help | help CMD | --version
//   frugal --debug ...         Lua tracebacks for every error (else only for
//                              errors in the user's own scripts)
#include <malloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "loader/search_paths.h"
#include "lua/lua_runner.h"

namespace {

constexpr int kUsageError = 2;

bool is_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void print_help(std::ostream& os) {
  const std::string dir = frugal::script_dir();
  os << "frugal " << FRUGAL_VERSION << ": fit and run convolutional networks under a memory budget\n\n"
     << "usage: frugal COMMAND [args]        run a sub-command (a Lua script in " << dir << ")\n"
     << "       frugal SCRIPT.lua [args]     run a Lua script with the frugal module loaded\n"
     << "       frugal -e 'CODE' [args]      run a chunk of Lua\n"
     << "       frugal help COMMAND          show a command's usage, options and defaults\n"
     << "       frugal --version\n"
     << "       frugal --debug ...           show Lua tracebacks for every error (also as an option\n"
     << "                                    of any command); without it a command's error is one line\n\n";
  std::vector<frugal::ScriptCommand> cmds = frugal::list_script_commands(dir);
  if (cmds.empty()) {
    os << "no commands found in " << dir << " (set FRUGAL_SCRIPT_DIR?)\n";
  } else {
    size_t w = 0;
    for (const auto& c : cmds) w = std::max(w, c.name.size());
    os << "commands:\n";
    for (const auto& c : cmds)
      os << "  " << c.name << std::string(w - c.name.size() + 3, ' ')
         << (c.summary.empty() ? "(no summary)" : c.summary) << "\n";
  }
  os << "\nMemory sizes (budgets) accept 20MB or 1.5GB (decimal: MB = 10^6 bytes), 64MiB\n"
     << "(binary: MiB = 2^20 bytes) or a plain number of bytes.\n"
     << "Environment: FRUGAL_PLUGIN_PATH (extra plugin folders, ':'-separated),\n"
     << "FRUGAL_SCRIPT_DIR (where commands live), FRUGAL_SHADER_DIR.\n";
}

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const auto& c : frugal::list_script_commands(frugal::script_dir())) names.push_back(c.name);
  return names;
}

int unknown_command(const std::string& what) {
  std::cerr << "frugal: unknown command '" << what << "'.";
  std::string guess = frugal::closest_name(what, command_names());
  if (!guess.empty()) std::cerr << " Did you mean '" << guess << "'?";
  std::cerr << " Run 'frugal --help' for the list of commands.\n";
  return kUsageError;
}

std::string command_path(const std::string& name) { return frugal::script_dir() + "/" + name + ".lua"; }

bool is_command_name(const std::string& s) {
  if (s.empty() || s[0] == '_' || s[0] == '.') return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

// A command's help is what its argument spec prints (scripts/lib/argparse.lua).
int help_for(const std::string& name) {
  const std::string path = command_path(name);
  if (!is_command_name(name) || !is_file(path)) return unknown_command(name);
  frugal::LuaRunner lua;
  lua.set_tracebacks(false);
  return lua.run_file(path, {"--help"});
}

// Removes every "--debug" from args; true if there was one.
bool take_debug_flag(std::vector<std::string>* args) {
  const auto end = std::remove(args->begin(), args->end(), std::string("--debug"));
  const bool found = end != args->end();
  args->erase(end, args->end());
  return found;
}

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool debug = false;
  while (!args.empty() && args[0] == "--debug") {
    debug = true;
    args.erase(args.begin());
  }
  if (args.empty()) {
    print_help(std::cerr);
    return kUsageError;
  }
  const std::string first = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());

  if (first == "--help" || first == "-h" || (first == "help" && rest.empty())) {
    print_help(std::cout);
    return 0;
  }
  if (first == "help") return help_for(rest[0]);
  if (first == "--version" || first == "-V" || first == "version") {
    std::cout << "frugal " << FRUGAL_VERSION << "\n";
    return 0;
  }
  if (first == "-e") {
    if (rest.empty()) {
      std::cerr << "frugal: -e needs a chunk of Lua code\n";
      return kUsageError;
    }
    std::string code = rest[0];
    rest.erase(rest.begin());
    frugal::LuaRunner lua;
    lua.set_debug(debug);
    return lua.run_string(code, "(command line)", rest);
  }
  if (!first.empty() && first[0] == '-') {
    std::cerr << "frugal: unknown option '" << first << "'. Run 'frugal --help'.\n";
    return kUsageError;
  }
  // A script path (the user's: tracebacks), or a command name (one-line errors).
  std::string script;
  bool builtin = false;
  if (ends_with(first, ".onnx")) {
    std::cerr << "frugal: '" << first << "' is a model, not a script; try 'frugal info " << first
              << "' or 'frugal --help'\n";
    return kUsageError;
  }
  if (ends_with(first, ".lua") || first.find('/') != std::string::npos) {
    if (!is_file(first)) {
      std::cerr << "frugal: cannot open script '" << first << "': no such file\n";
      return kUsageError;
    }
    script = first;
  } else if (is_command_name(first) && is_file(command_path(first))) {
    script = command_path(first);
    builtin = true;
    debug = take_debug_flag(&rest) || debug;
  } else {
    return unknown_command(first);
  }
  frugal::LuaRunner lua;
  lua.set_debug(debug);
  lua.set_tracebacks(debug || !builtin);
  return lua.run_file(script, rest);
}

}  // namespace

int main(int argc, char** argv) {
  // Large blocks (weights, arenas, tensors) always in their own mappings, so
  // that freeing one gives its memory back at once. glibc otherwise raises this
  // threshold after each such free, and a model's freed weights then stay
  // resident in the heap beside the executor's copy.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "frugal: " << e.what() << "\n";
    return 1;
  }
}
