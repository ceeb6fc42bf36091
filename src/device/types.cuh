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
 *   pkind    one byte per page: pinfo as a byte (DM_PK_*), what release builds read; a warp
 *            freeing 32 4-KiB runs reads 8 sectors of it where it read 32 of pinfo.
 *   slot     a lone lane's class pages: per hardware warp slot (multiprocessor
 *            and %warpid), one word per class naming a class page and how many of its
 *            blocks were handed out; a lone lane takes the next block with one atomic add.
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

/* Lone-lane pages (classes.cuh, entry.cu, group.cu): one slot per hardware warp
 * slot of the device (%smid * DM_SLOT_WARPS + %warpid: a hint, as in dm_slot_word; nslot of
 * them, set from the device's multiprocessor count), each with one word per class
 * (DM_SLOT_STRIDE words apart: a slot's words in their own two sectors), a word being
 * (page << 32 | blocks of it handed out so far). A lane alone in its warp adds 1 to its
 * slot's word: below the class's blocks per page, the old count names its block. The warps
 * that run in one hardware slot run one after another, so a word is only ever bumped by
 * one warp at a time (or by lanes of it calling from divergent code, or after the rare
 * preemption that moves a warp). DM_SLOT_EMPTY: no page (its count is past every class's
 * blocks, so a bump on it asks for a page). */
#define DM_SLOT_WARPS 64u                 /* %warpid < 64 on every architecture so far */
#define DM_SLOT_STRIDE 8u
#define DM_SLOT_NONE 0xffffffffu
#define DM_SLOT_EMPTY ((0xffffffffull << 32) | 0x40000000ull)
#define DM_SLOT_RECLAIM_SPAN 256u         /* slot words one exhausted request retires */

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

/* pkind: one byte per page, pinfo's kind in its top two bits and its value below, capped
 * at DM_PK_VMAX (a run of 63 pages or more, or a body page 63 or more pages past its
 * head, reads DM_PK_VMAX: its pinfo holds the value). Release builds (DM_PK_RECORD) keep
 * pinfo only for those: pkind is the page's record, read by dm_locate and by free.cu's
 * whole-warp path; debug builds write both in full and their checks read pinfo
 * (DM_PK_RECORD=0: release builds too, and only the whole-warp free reads pkind).
 * Ordering, as pinfo's always was: the claimer stores a page's record (plain stores of 1
 * to 8 bytes, never covering another page's byte) before the fence.acq_rel that precedes
 * handing any block of the page out (dm_class_page_init, dm_page_round), and a reader
 * loads it (relaxed) only through a pointer to that live page, which reached it after
 * that fence; a free page's stale record is read only for a foreign pointer. Why: the record
 * load is a DRAM miss on the free path, and a 4-KiB run's head entry in pinfo is 32 B from the
 * next run's, so a warp freeing 32 runs loads 32 sectors, where their pkind bytes are 8 B
 * apart (8 sectors a warp); and a claimer writes a 4-KiB run's record with one 8-byte store
 * where it would write 8 pinfo words. DM_PK_RECORD=0 keeps the record in pinfo, with pkind
 * read only by the whole-warp free (docs/HISTORY.md: the measurements). */
#ifndef DM_PK_RECORD
#define DM_PK_RECORD 1
#endif
#define DM_PK_VMAX 63u
#define DM_PK_OF(pi) ((unsigned char)((DM_PI_KIND(pi) >> 24) | \
                                      (DM_PI_VAL(pi) < DM_PK_VMAX ? DM_PI_VAL(pi) : DM_PK_VMAX)))
#define DM_PK_INFO(b) ((((unsigned)(b) & 0xc0u) << 24) | ((unsigned)(b) & DM_PK_VMAX))
/* DM_PK_UNFENCED: set in the pkind value of a class page (classes are 0..5: the bit is
 * free) whose claimer wrote its record without the claim's fence (entry.cu,
 * dm_malloc_warp16: a whole warp's 16-B page, claimed by an acquire atomic). The fence's
 * release half ordered the record before any block of the page could reach another
 * multiprocessor through the buffers, which carry no fence of their own (fifo.cuh); for
 * such a page that release is made by the free that would send a block of it to a buffer
 * or to its count (lane.cuh, dm_page_record), a path whole warps freeing their own page
 * never take (free.cu, dm_free_warp, whose red.release after a warp barrier covers the
 * claimer's stores). Readers of a class page's value strip the bit. Only in release builds
 * whose record is pkind (DM_CLAIM_UNFENCED): debug builds and DM_PK_RECORD=0 read pinfo,
 * and their claims fence (docs/HISTORY.md: what the unfenced claim gains). */
#define DM_PK_UNFENCED 0x20u
#define DM_PK_CLASS_BYTE (DM_PI_CLASS >> 24)
#define DM_CLAIM_UNFENCED (!DM_CHECKS && DM_PK_RECORD)

/* whether page records of value v live in pinfo too (debug builds: all of them) */
#define DM_PI_KEPT(v) (DM_CHECKS || !DM_PK_RECORD || DM_PI_VAL(v) >= DM_PK_VMAX)

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
 * base, the bounds, then the pinfo array) would be serialised by the branches between them.
 * DM_HEAP_CONST=0 puts it back in global memory (docs/HISTORY.md: the measurements). */
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
  unsigned *pinfo;                  /* [npages] (release: values >= DM_PK_VMAX only) */
  unsigned char *pkind;             /* [npages] the page records as bytes (DM_PK_*) */
  int *blockcount;                  /* [npages] blocks of a class page out of it (at users
                                       or in buffers; & DM_BC_OUT), the page goes back at
                                       0; plus the drains (DM_BC_DRAINED each) */
  unsigned *live;                   /* [npages * DM_BLOCK_WORDS] DM_CHECKS: 1 = at a user
                                       (NULL in release builds: not allocated) */
  dm_fifo *fifo;                    /* [DM_NCLASS * DM_NFIFO] */
  unsigned long long *slot;         /* [nslot * DM_SLOT_STRIDE] lone-lane pages, class c of
                                       slot s at s * DM_SLOT_STRIDE + c */
  unsigned nslot;                   /* slots: multiprocessors * DM_SLOT_WARPS */
  dm_counters *ctr;
} dm_heap_dev;

#endif /* DM_TYPES_CUH */
