// Plugin "vbs": variable batch size per layer (the paper's DP, extended; never
// worse than fixed batch or greedy).
#include "plugin_glue.h"

FRUGAL_PLANNER_PLUGIN(vbs, "vbs",
                      "Variable batch size per layer under a memory budget (VBS dynamic program, extended)")
