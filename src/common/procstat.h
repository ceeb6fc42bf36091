/* procstat.h: what the kernel says about this process's memory (/proc/self/status), for the
 * statistics of schedulers and benchmarks: the peak resident set (VmHWM) and the current one
 * (VmRSS). The parser is separate so that it is tested without /proc. */
#ifndef AH_PROCSTAT_H
#define AH_PROCSTAT_H

#include <stdint.h>

/* The value in KiB of a "Field:   1234 kB" line of a /proc/<pid>/status text; 0, or -1 when
 * the field is missing or not a number. */
int procstat_parse_kib(const char *status_text, const char *field, uint64_t *kib);
/* This process's peak resident memory (VmHWM) in KiB; 0 when /proc cannot tell. */
uint64_t procstat_peak_rss_kib(void);
/* Its current resident memory (VmRSS) in KiB; 0 when /proc cannot tell. */
uint64_t procstat_rss_kib(void);

#endif
