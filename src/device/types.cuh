/* types.cuh: the device allocator's nouns, constants and the heap descriptor kernels see.
 *
 * Glossary
 *   arena    the cudaMalloc'd bytes a heap hands out; metadata lives apart from it.
 *   page     DM_PAGE_BYTES of the arena; one bit per page in the page bitmap (1 = used).
 *   run      consecutive pages given to one request larger than the largest class.
 *   class    a block size (16 B .. 512 B, powers of two); a class page is one page cut
 *            into blocks of one class, with a count of its blocks that are out.
 *   buffer   a lock-free FIFO of free blocks of one class; each class has DM_NFIFO of them,
 *            chosen by hash (XMalloc 5.2).
 *   area     a coalesced request: one block or run shared by the lanes of a warp, each lane
 *            owning one compartment; a header at its start counts the live compartments.
 *            Areas are cut to at most 512 B (the largest class) or runs of 1, 2 or 4 KiB,
 *            whichever wastes least for the sizes asked (coalesce.cuh).
 *   pinfo    one word per page saying what the page holds (free, class page, run head/body).
 */
#ifndef DM_TYPES_CUH
#define DM_TYPES_CUH

#include <stdint.h>
#include <stdio.h>

#if defined(AH_DEBUG) || defined(DM_DEBUG)
#define DM_CHECKS 1
#else
#define DM_CHECKS 0
#endif

#define DM_PAGE_SHIFT 9u                  /* 512-B pages: a run wastes 256 B on average */
#define DM_PAGE_BYTES (1u << DM_PAGE_SHIFT)
#define DM_ALIGN 16u                      /* every block and compartment is 16-B aligned */
#define DM_NCLASS 6u                      /* 16, 32, 64, 128, 256, 512 */
#define DM_MIN_SHIFT 4u
#define DM_CLASS_MAX (16u << (DM_NCLASS - 1u))
#define DM_BLOCK_WORDS ((DM_PAGE_BYTES / 16u + 31u) / 32u)   /* live-bitmap words per page */
#define DM_NFIFO 1024u                    /* buffers per class: few warps share one */
#define DM_FIFO_CAP 64u                   /* messages per buffer (power of two) */
#define DM_COALESCE_MAX 256u              /* larger requests are never coalesced */
#define DM_AREA_OPTS 4u                   /* area limits: 512 B, 1, 2, 4 KiB */
#define DM_REQUEST_COST 32u               /* bytes a coalescing plan charges per request */
#define DM_WALK_ROUNDS 16u                /* random-walk rounds before the bounded sweep */
#define DM_RECLAIM_SPAN 256u              /* buffers one exhausted request empties */
#define DM_TAKE_TRIES 4u                  /* retiring blocks a pop drains before a search */
#define DM_AREA_MAGIC 0xA7EAC0A1u         /* tag at the start of a coalesced area */

/* blockcount of a class page: blocks out of it (at users or in buffers) in the low bits,
 * and above them one DM_BC_DRAINED per drain that left blocks out (a page with any is
 * retiring: the blocks that went home are lost to users until the whole page follows,
 * so its buffered blocks are sent home too rather than handed out; classes.cuh) */
#define DM_BC_OUT 0xffffu
#define DM_BC_DRAINED 0x10000

/* pinfo encoding: kind in the top two bits, a value below */
#define DM_PI_FREE 0u
#define DM_PI_CLASS (1u << 30)            /* value: class index */
#define DM_PI_HEAD (2u << 30)             /* value: pages in the run */
#define DM_PI_BODY (3u << 30)             /* value: distance back to the run head */
#define DM_PI_KIND(x) ((x) & (3u << 30))
#define DM_PI_VAL(x) ((x) & ((1u << 30) - 1u))

/* One XMalloc FIFO (Huang et al. 5.2.1): a message is (sequence number << 32 | payload);
 * the payload is a block's offset in the arena in DM_ALIGN units. */
typedef struct dm_fifo {
  unsigned head;                    /* sequence number of the head message */
  unsigned pad_[3];
  unsigned long long tail;          /* the whole tail message */
  unsigned long long msg[DM_FIFO_CAP];
} dm_fifo;

/* Header of a coalesced area. Debug builds also keep each compartment's offset and a
 * live mask, so that a compartment freed twice is caught. */
typedef struct dm_area {
  unsigned magic;
  unsigned count;                   /* live compartments */
  unsigned live;                    /* DM_CHECKS: bit i = compartment i not yet freed */
  unsigned n;                       /* compartments */
#if DM_CHECKS
  unsigned short off[32];           /* DM_CHECKS: compartment offsets in DM_ALIGN units */
#endif
} dm_area;
#define DM_AREA_HDR ((unsigned)((sizeof(dm_area) + DM_ALIGN - 1u) & ~(DM_ALIGN - 1u)))

/* Counters of rare events (never touched on the fast paths). */
typedef struct dm_counters {
  unsigned long long nulls, bad_frees, runs, drains;
  unsigned broken;                  /* DM_CHECKS: internal invariants found violated */
} dm_counters;

/* DM_CHECKS: an internal invariant; a violation is counted and the first few printed. */
#if DM_CHECKS
#define DM_INVARIANT(h, cond, ...)                                                     \
  do {                                                                                 \
    if (!(cond) && atomicAdd(&(h)->ctr->broken, 1u) < 16u) printf("dm: " __VA_ARGS__); \
  } while (0)
#else
#define DM_INVARIANT(h, cond, ...) do { } while (0)
#endif

/* The heap as kernels see it: a copy lives in dm_heap_g (group.cu), written only by the
 * host between kernels (dm_heap_use, dm_heap_destroy). It lives in constant memory: every
 * lane of a warp reads the same fields, which the constant cache serves to the whole warp
 * at once, where global loads of them cost an L1 round trip each, and chains of them (the
 * base, the bounds, then the pinfo array) were serialised by the branches between them.
 * On the H100 (issue 17, one call, global against constant): alloc1k 0.231 -> 0.221 ms,
 * alloc4k 0.294 -> 0.262, churn16_lane0 0.364 -> 0.343, alloc256 0.136 -> 0.133; the
 * frees and the 16-B rows within noise. DM_HEAP_CONST=0 puts it back in global memory. */
#ifndef DM_HEAP_CONST
#define DM_HEAP_CONST 1
#endif
#if DM_HEAP_CONST
#define DM_HEAP_SPACE __constant__
#else
#define DM_HEAP_SPACE __device__
#endif
typedef struct dm_heap_dev {
  char *base;                       /* arena */
  unsigned long long bytes;         /* npages * DM_PAGE_BYTES */
  unsigned npages, nwords;          /* pages, page-bitmap words */
  unsigned *bitmap;                 /* [nwords] page used bits; bits past npages set */
  unsigned *pinfo;                  /* [npages] */
  int *blockcount;                  /* [npages] blocks of a class page out of it (at users
                                       or in buffers; & DM_BC_OUT), the page goes back at
                                       0; plus the drains (DM_BC_DRAINED each) */
  unsigned *live;                   /* [npages * DM_BLOCK_WORDS] DM_CHECKS: 1 = at a user */
  dm_fifo *fifo;                    /* [DM_NCLASS * DM_NFIFO] */
  dm_counters *ctr;
} dm_heap_dev;

#endif /* DM_TYPES_CUH */
