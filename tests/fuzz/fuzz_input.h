/* fuzz_input.h: the input format of fuzz_server, shared with the seed generator.
 *
 * byte 0: the job's shape and ending (FUZZ_SHAPE_*). Then records, until the input ends:
 *   sel   1 byte: bits 0-3 the source (rank sel % (nranks + 2) - 1: so -1 and nranks occur),
 *         bits 4-5 the scheduler it is handed to (% nsched), bit 6: hand it to the source's
 *         natural neighbour instead (a worker's leaf, a scheduler's parent or first child),
 *         bit 7: repair the header (magic, version, length; a worker source's origin, dest
 *         and sched too), so that mutations of the payload get past the decoder's checks.
 *   len   2 bytes, little endian (cut to what is left of the input)
 *   bytes len bytes of message.
 */
#ifndef AH_FUZZ_INPUT_H
#define AH_FUZZ_INPUT_H

#define FUZZ_SHAPE_TREE 0x01     /* 3 schedulers, fan-out 2, 4 workers (else 1 + 2 workers) */
#define FUZZ_SHAPE_FINALIZE 0x02 /* every worker sends FINALIZE at the end: full shutdown */

#define FUZZ_SEL_NATURAL 0x40
#define FUZZ_SEL_REPAIR 0x80

#endif
