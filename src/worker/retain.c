/* retain.c: the budget of freed GAS memory a worker keeps mapped (retain.h explains why). */
#include "worker/retain.h"

void retain_init(retain *r, size_t budget) { *r = (retain){.budget = budget}; }

bool retain_keep(retain *r, size_t bytes) {
  if (bytes > r->budget - r->held) return false; /* held <= budget always */
  r->held += bytes;
  return true;
}

void retain_reused(retain *r, size_t bytes) { r->held -= bytes < r->held ? bytes : r->held; }
