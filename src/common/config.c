/* config.c: ANTHEAP_* environment variables, checked and turned into an ah_config. */
#include "common/config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/types.h"

/* Read an unsigned number (0x... allowed) from the environment into *v, within [lo, hi]. */
static int env_number(const char *name, uint64_t lo, uint64_t hi, uint64_t *v, char *err,
                      size_t errlen) {
  const char *s = getenv(name);
  if (!s || !*s) return 0;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 0);
  if (errno || *end || x < lo || x > hi) {
    snprintf(err, errlen, "%s=%s: expected a number in [%llu, %llu]", name, s,
             (unsigned long long)lo, (unsigned long long)hi);
    return EINVAL;
  }
  *v = x;
  return 0;
}

int ah_config_from_env(ah_config *c, char *err, size_t errlen) {
  const ah_config d = {.gas_base = AH_GAS_BUILD_BASE, .gas_size = AH_GAS_DEFAULT_SIZE,
                       .boot_pages = 64, .refill_pages = 64, .boot_ids = 4096, .refill_ids = 4096,
                       .ceiling_pages = 256, .high_watermark = 16, .low_watermark = 2,
                       .share_objects = 64, .split_hosts = 1, .bells = true}; /* (*c: only on success) */
  uint64_t base = d.gas_base, mib = d.gas_size >> 20, bp = d.boot_pages, rp = d.refill_pages,
           bi = d.boot_ids, ri = d.refill_ids, hw = d.high_watermark, lw = d.low_watermark,
           cp = d.ceiling_pages, so = (uint64_t)d.share_objects, sh = (uint64_t)d.split_hosts,
           bells = d.bells;
  int rc = env_number("ANTHEAP_GAS_BASE", AH_PAGE_SIZE, (uint64_t)1 << 47, &base, err, errlen);
  if (!rc) rc = env_number("ANTHEAP_GAS_SIZE_MIB", 16, (uint64_t)1 << 26, &mib, err, errlen);
  if (!rc) rc = env_number("ANTHEAP_BOOT_PAGES", 0, (uint64_t)1 << 26, &bp, err, errlen);
  if (!rc) rc = env_number("ANTHEAP_REFILL_PAGES", 1, (uint64_t)1 << 26, &rp, err, errlen);
  if (!rc) rc = env_number("ANTHEAP_BOOT_IDS", 0, UINT32_MAX / 2, &bi, err, errlen);
  if (!rc) rc = env_number("ANTHEAP_REFILL_IDS", 1, UINT32_MAX / 2, &ri, err, errlen);
  if (!rc) rc = env_number("ANTHEAP_CEILING_PAGES", 0, (uint64_t)1 << 26, &cp, err, errlen);
  if (!rc) rc = env_number("ANTHEAP_HIGH_WATERMARK", 1, 1u << 20, &hw, err, errlen);
  if (!rc) rc = env_number("ANTHEAP_LOW_WATERMARK", 0, 1u << 20, &lw, err, errlen);
  if (!rc) rc = env_number("ANTHEAP_SHARE_OBJECTS", 1, 64, &so, err, errlen);
  if (!rc) rc = env_number("ANTHEAP_SPLIT_HOSTS", 1, 4096, &sh, err, errlen);
  if (!rc) rc = env_number("ANTHEAP_BELLS", 0, 1, &bells, err, errlen);
  if (rc) return rc;
  if (base % AH_PAGE_SIZE) {
    snprintf(err, errlen, "ANTHEAP_GAS_BASE=0x%" PRIx64 ": expected a multiple of 1 MiB", base);
    return EINVAL;
  }
  if (base + (mib << 20) > ((uint64_t)1 << 47)) {
    snprintf(err, errlen, "ANTHEAP_GAS_BASE=0x%" PRIx64 " with ANTHEAP_GAS_SIZE_MIB=%" PRIu64
             ": the GAS would end past 2^47", base, mib);
    return EINVAL;
  }
  if (lw > hw) {
    snprintf(err, errlen, "ANTHEAP_LOW_WATERMARK=%" PRIu64 " is above ANTHEAP_HIGH_WATERMARK=%"
             PRIu64 ": expected low <= high", lw, hw);
    return EINVAL;
  }
  *c = (ah_config){.gas_base = base, .gas_size = mib << 20, .boot_pages = bp, .refill_pages = rp,
                   .boot_ids = (uint32_t)bi, .refill_ids = (uint32_t)ri, .ceiling_pages = cp,
                   .high_watermark = hw, .low_watermark = lw, .share_objects = (int)so,
                   .split_hosts = (int)sh, .bells = bells != 0};
  return 0;
}

const char *ah_config_help(void) {
  return "environment (every rank reads the same):\n"
         "  ANTHEAP_GAS_BASE         GAS start address (default 0x100000000000; 0x680000000000\n"
         "                           in AddressSanitizer builds)\n"
         "  ANTHEAP_GAS_SIZE_MIB     GAS size in MiB (default 65536)\n"
         "  ANTHEAP_BOOT_PAGES       1 MiB pages per scheduler at boot (default 64)\n"
         "  ANTHEAP_REFILL_PAGES     pages a scheduler asks its parent for (default 64)\n"
         "  ANTHEAP_BOOT_IDS         region IDs per scheduler at boot (default 4096)\n"
         "  ANTHEAP_REFILL_IDS       region IDs per refill (default 4096)\n"
         "  ANTHEAP_CEILING_PAGES    free pages a scheduler keeps; more go back up (default 256)\n"
         "  ANTHEAP_HIGH_WATERMARK   free slabs a new region starts with (default 16)\n"
         "  ANTHEAP_LOW_WATERMARK    free slabs trimming leaves a region (default 2)\n"
         "  ANTHEAP_SHARE_OBJECTS    memory objects a host's shared GAS is striped over, 1 to 64\n"
         "                           (default 64: first touches in different stripes do not\n"
         "                           wait for each other; 1: one object, one mapping)\n"
         "  ANTHEAP_SPLIT_HOSTS      for tests of multi-host code on one machine: each host's\n"
         "                           workers act as this many hosts, consecutive worker ids\n"
         "                           together (schedulers left out), each sharing its GAS only\n"
         "                           within itself; the same on every rank (default 1)\n"
         "  ANTHEAP_BELLS            1: a rank asleep in a wait is woken by the ranks of its\n"
         "                           host that send to it (doorbells); 0: only by its sleep's\n"
         "                           end (default 1; off unless every rank says 1)\n";
}
