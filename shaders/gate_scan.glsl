// Shared by the gating shaders that build lists in one work group (a power of
// two invocations, at most 128): an exclusive scan of one count per
// invocation. scan_counts returns the group's total (the same in every
// invocation) and leaves each invocation's offset in scan_at. Every invocation
// of the group must call it (it holds barriers).

shared uint scan_part[128];
uint scan_at;

uint scan_counts(uint mine, uint t, uint G) {
  barrier();  // earlier readers of scan_part are done
  scan_part[t] = mine;
  barrier();
  for (uint h = 1u; h < G; h <<= 1u) {  // inclusive Hillis-Steele scan
    const uint add = t >= h ? scan_part[t - h] : 0u;
    barrier();
    scan_part[t] += add;
    barrier();
  }
  scan_at = scan_part[t] - mine;
  return scan_part[G - 1u];
}
