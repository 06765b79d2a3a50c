// Where the host finds its scripts, plugins and shaders: the build tree (compiled
// in), overridable by environment variables for installed or relocated use.
#pragma once

#include <string>
#include <vector>

namespace frugal {

std::string script_dir();               // FRUGAL_SCRIPT_DIR, else the source tree's scripts/
std::string shader_dir();               // FRUGAL_SHADER_DIR, else the build tree's shaders/
std::vector<std::string> plugin_dirs();  // build plugin folder, then FRUGAL_PLUGIN_PATH entries

}  // namespace frugal
