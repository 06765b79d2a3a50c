// Plugin "fbs": the fixed-batch baseline (largest uniform batch that fits).
#include "plugin_glue.h"

FRUGAL_PLANNER_PLUGIN(fbs, "fbs", "Fixed batch size: the largest uniform batch that fits, in rounds")
