/* types.h: the nouns of antheap and its units (the assertion macro is common/assert.h).
 *
 * Glossary
 *   GAS        global address space: one virtual range mapped at the same address on every
 *              worker; region objects live there, so pointers mean the same thing everywhere.
 *   page       1 MiB of GAS; the unit in which schedulers trade address space.
 *   slab       4 KiB; the unit in which a pool carves address space for one slot size.
 *   slot       one object's place in a slab; sizes are multiples of 64 B (the alignment).
 *   run        several contiguous slabs holding one large object under one descriptor.
 *   pool       a slab allocator over address ranges handed to it (src/slab); it never touches
 *              the memory it manages unless it is self-hosted (the kernel pool).
 *   meta pool  the pool whose memory holds another pool's metadata (descriptors, trie nodes).
 *   trie       8-degree trie of 64-byte nodes (src/trie); indexes slabs, ranges and IDs.
 *   region     a growable set of objects with its own pool; regions form a tree (src/region).
 *   scheduler  a rank running antheapd: owns address space and regions (src/sched).
 *   leaf       a scheduler with workers below it instead of schedulers.
 *   worker     a rank running the application, calling sys_* (src/worker).
 */
#ifndef AH_TYPES_H
#define AH_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/assert.h" /* AH_ASSERT: invariants checked in Debug builds */

/* Units: the only place these numbers are written down. */
#define AH_SLOT_ALIGN_SHIFT 6u
#define AH_SLOT_ALIGN ((size_t)1 << AH_SLOT_ALIGN_SHIFT)   /* 64 B  */
#define AH_SLAB_SHIFT 12u
#define AH_SLAB_SIZE ((size_t)1 << AH_SLAB_SHIFT)          /* 4 KiB */
#define AH_PAGE_SHIFT 20u
#define AH_PAGE_SIZE ((size_t)1 << AH_PAGE_SHIFT)          /* 1 MiB */
#define AH_SLOTS_PER_SLAB (AH_SLAB_SIZE / AH_SLOT_ALIGN)   /* 64: one bitmap word */

/* Default GAS placement (configurable at run time). */
#define AH_GAS_DEFAULT_BASE ((uintptr_t)0x100000000000ull)
#define AH_GAS_DEFAULT_SIZE ((size_t)64 << 30)
/* AddressSanitizer (x86-64) keeps its shadow memory in [0x02008fff7000, 0x10007fff8000), which
 * holds AH_GAS_DEFAULT_BASE, and its allocator's heap in 4 TiB at 0x600000000000 (LLVM 14's
 * runtime: GCC 12, clang 14) or at 0x500000000000 (later ones: GCC 13 on Ubuntu 24.04). A build
 * under ASan (AH_ASAN_BUILD) maps the GAS at AH_GAS_ASAN_BASE instead, clear of all three and of
 * PIE binaries (0x55..). Schedulers and workers of one build agree on it: every default base
 * comes from AH_GAS_BUILD_BASE. */
#define AH_GAS_ASAN_BASE ((uintptr_t)0x680000000000ull)
#if defined(__SANITIZE_ADDRESS__)
#define AH_ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AH_ASAN_BUILD 1
#endif
#endif
#ifdef AH_ASAN_BUILD
#define AH_GAS_BUILD_BASE AH_GAS_ASAN_BASE
#else
#define AH_GAS_BUILD_BASE AH_GAS_DEFAULT_BASE
#endif

/* Round x up to a multiple of the power of two a. */
static inline size_t ah_round_up(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }

#endif /* AH_TYPES_H */
