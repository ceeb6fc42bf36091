/* config.h: the run-time settings every rank of a job reads the same way: the GAS window and
 * the trading sizes, from defaults overridden by ANTHEAP_* environment variables. */
#ifndef AH_CONFIG_H
#define AH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ah_config {
  uintptr_t gas_base;    /* ANTHEAP_GAS_BASE (hex or decimal) */
  size_t gas_size;       /* ANTHEAP_GAS_SIZE_MIB */
  size_t boot_pages;     /* ANTHEAP_BOOT_PAGES: 1 MiB pages per scheduler at boot */
  size_t refill_pages;   /* ANTHEAP_REFILL_PAGES */
  uint32_t boot_ids;     /* ANTHEAP_BOOT_IDS: region IDs per scheduler at boot */
  uint32_t refill_ids;   /* ANTHEAP_REFILL_IDS */
  size_t ceiling_pages;  /* ANTHEAP_CEILING_PAGES: free pages above it go back up (0: never) */
  size_t high_watermark; /* ANTHEAP_HIGH_WATERMARK: free slabs a new region starts with */
  size_t low_watermark;  /* ANTHEAP_LOW_WATERMARK: free slabs trimming leaves a region */
  int share_objects;     /* ANTHEAP_SHARE_OBJECTS: memfds a shared GAS is striped over (1-64) */
  int split_hosts;       /* ANTHEAP_SPLIT_HOSTS: each host's workers act as this many hosts */
  bool bells;            /* ANTHEAP_BELLS: waits woken by their host's senders (job/bells.h) */
} ah_config;

/* Defaults, then the environment. 0, or EINVAL with a one-line message in err. */
int ah_config_from_env(ah_config *c, char *err, size_t errlen);
/* Text for --help: the variables and their defaults. */
const char *ah_config_help(void);

#endif
