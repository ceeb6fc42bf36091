/* watch.c: waits that say why (watch.h). */
#include "common/watch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/clock.h"

/* Seconds from the environment variable name into *ns (unset: def seconds). */
static int seconds_from_env(const char *name, double def, uint64_t *ns, char *err, size_t errlen) {
  const char *v = getenv(name);
  double s = def;
  if (v && *v) {
    char *end;
    errno = 0;
    s = strtod(v, &end);
    if (errno || *end || !(s >= 0) || s > 1e9) {
      snprintf(err, errlen, "%s=%s: expected a number of seconds (0: never)", name, v);
      return EINVAL;
    }
  }
  *ns = (uint64_t)(s * 1e9 + 0.5);
  return 0;
}

int watch_config_from_env(watch_config *c, int me, char *err, size_t errlen) {
  c->me = me;
  int rc = seconds_from_env("ANTHEAP_WAIT_WARN", WATCH_WARN_DEFAULT_S, &c->warn_ns, err, errlen);
  if (!rc) rc = seconds_from_env("ANTHEAP_WAIT_TIMEOUT", 0, &c->timeout_ns, err, errlen);
  return rc;
}

bool watch_active(const watch_config *cfg) { return cfg && (cfg->warn_ns || cfg->timeout_ns); }

void watch_start(watch *w, const watch_config *cfg, const char *call, const char *what, int peer) {
  *w = (watch){.cfg = watch_active(cfg) ? cfg : NULL, .call = call, .what = what, .peer = peer};
  if (w->cfg) w->start_ns = ah_now_ns();
}

static void warn(const watch *w, uint64_t waited) {
  char what[256];
  snprintf(what, sizeof what, w->what, w->peer);
  fprintf(stderr, "antheap: worker %d: %s has waited %.1f s for %s; still waiting%s\n",
          w->cfg->me, w->call, (double)waited * 1e-9, what,
          w->cfg->timeout_ns ? "" : " (ANTHEAP_WAIT_TIMEOUT=S makes it fail with ETIMEDOUT)");
  fflush(stderr);
}

int watch_poll(watch *w) {
  if (!w->cfg) return 0;
  uint64_t waited = ah_now_ns() - w->start_ns;
  if (w->cfg->timeout_ns && waited >= w->cfg->timeout_ns) {
    fprintf(stderr, "antheap: worker %d: %s gave up after %.1f s (ANTHEAP_WAIT_TIMEOUT): ETIMEDOUT\n",
            w->cfg->me, w->call, (double)waited * 1e-9);
    return ETIMEDOUT;
  }
  if (!w->warned && w->cfg->warn_ns && waited >= w->cfg->warn_ns) {
    w->warned = true;
    warn(w, waited);
  }
  return 0;
}
