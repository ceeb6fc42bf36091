/* debug.h: test-only hooks of the worker library (not part of the public API). */
#ifndef AH_WORKER_DEBUG_H
#define AH_WORKER_DEBUG_H
#include <stddef.h>
/* Send len raw bytes to this worker's leaf scheduler on the protocol channel, unchecked
 * (to test how a daemon copes with a malformed message). 0 or -1. */
int antheap_debug_send_raw(const void *buf, size_t len);
/* The world rank of the scheduler holding the object at ptr, or -1 (errno set). */
int antheap_debug_scheduler_of(const void *ptr);
/* The world rank of the scheduler at `level` (0 = root) on this worker's path; its leaf
 * when the tree is not that deep. */
int antheap_debug_path(int level);
/* Turn the allocation cache on or off (off: every call a round trip, as ANTHEAP_CACHE=off);
 * turning it off flushes it first. 0, or -1 with errno (a failed flush, or no memory). */
int antheap_debug_set_cache(int on);
/* Pack requests (MSG_PACKV) this worker has sent so far: one for every sys_send that names
 * something and is not served by the move memo (memo.h), and one for every sys_rfree; not
 * those ANTHEAP_MOVE_MEMO=check adds. */
long antheap_debug_packs(void);
/* Replies this worker took that said more parts were coming (a pack of more ranges than one
 * reply carries: proto.h, PROTO_REPLY_MORE). */
long antheap_debug_reply_parts(void);
/* Would a send to peer use the move memo: 1 when it is on and peer maps the same GAS memory,
 * else 0 (-1 with errno when the library is not up or peer is no other worker). */
int antheap_debug_memo_applies(int peer);
#endif
