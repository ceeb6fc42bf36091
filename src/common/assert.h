/* assert.h: invariants written as checks (AH_ASSERT), and AH_CHECKS to guard the whole-structure
 * checks that walk a trie or a pool. Debug builds (AH_DEBUG, set by CMAKE_BUILD_TYPE=Debug and
 * by the fuzzing build) check them and abort with the condition, file and line; Release builds
 * compile them out. Only for the code's own invariants: bad input from another process is an
 * error code, never an assertion. */
#ifndef AH_COMMON_ASSERT_H
#define AH_COMMON_ASSERT_H

#include <stdio.h>
#include <stdlib.h>

#ifdef AH_DEBUG
#define AH_CHECKS 1
#define AH_ASSERT(cond)                                                                   \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      fprintf(stderr, "antheap: assertion failed: %s (%s:%d)\n", #cond, __FILE__,        \
              __LINE__);                                                                  \
      abort();                                                                            \
    }                                                                                     \
  } while (0)
#else
#define AH_CHECKS 0
/* not evaluated, but a use (sizeof would not be one to clang, which then calls a helper used
 * only in checks "not needed"): helpers used only in checks are not unused */
#define AH_ASSERT(cond) ((void)(0 && (cond)))
#endif

/* A whole-structure check (a call returning 0 when the structure is sound), run only where
 * AH_CHECKS is on: in Release the call is not compiled in. */
#define AH_ASSERT_CHECK(call)                                                             \
  do {                                                                                    \
    if (AH_CHECKS) AH_ASSERT((call) == 0);                                                \
  } while (0)

#endif /* AH_COMMON_ASSERT_H */
