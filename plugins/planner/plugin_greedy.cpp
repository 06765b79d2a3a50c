// Plugin "greedy": the paper's Greedy-VBS baseline.
#include "plugin_glue.h"

FRUGAL_PLANNER_PLUGIN(
    greedy, "greedy",
    "Greedy-VBS: layer by layer over the whole request, each at the largest batch that fits")
