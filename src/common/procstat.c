/* procstat.c: VmHWM / VmRSS from /proc/self/status (procstat.h). */
#include "common/procstat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int procstat_parse_kib(const char *text, const char *field, uint64_t *kib) {
  size_t n = strlen(field);
  for (const char *line = text; line && *line;) {
    if (strncmp(line, field, n) == 0 && line[n] == ':') {
      const char *p = line + n + 1;
      while (*p == ' ' || *p == '\t') p++;
      char *end;
      errno = 0;
      unsigned long long v = strtoull(p, &end, 10);
      if (end == p || errno) return -1;
      *kib = (uint64_t)v;
      return 0;
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
  return -1;
}

/* One field of /proc/self/status in KiB, or 0. */
static uint64_t read_field(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  char buf[8192];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  uint64_t kib = 0;
  return procstat_parse_kib(buf, field, &kib) == 0 ? kib : 0;
}

uint64_t procstat_peak_rss_kib(void) { return read_field("VmHWM"); }
uint64_t procstat_rss_kib(void) { return read_field("VmRSS"); }
