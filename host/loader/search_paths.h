// Where the host finds its scripts, plugins and shaders. Each has an environment
// override; otherwise an installed layout next to the executable
// (<prefix>/bin/frugal -> <prefix>/share/frugal/..., <prefix>/lib/frugal/plugins)
// wins when it exists, and the build tree's folders (compiled in) are the fallback.
#pragma once

#include <string>
#include <vector>

namespace frugal {

std::string script_dir();                // FRUGAL_SCRIPT_DIR, installed share/frugal/scripts, source scripts/
std::string shader_dir();                // FRUGAL_SHADER_DIR, installed share/frugal/shaders, build shaders/
std::vector<std::string> plugin_dirs();  // installed or build plugin folder, then FRUGAL_PLUGIN_PATH entries

}  // namespace frugal
