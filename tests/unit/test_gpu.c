/* test_gpu.c: the CPU side of GPU offload into regions (src/gpu/ranges.c and the pointer
 * translations of antheap_gpu.h): the registration table, the range rules, gpu_gas/gpu_dev.
 * No GPU needed. */
#include <check.h>
#include <errno.h>
#include <stdint.h>

#include "antheap_gpu.h"
#include "check_main.h"
#include "gpu/ranges.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

START_TEST(test_a_new_range_asks_to_be_registered_once) {
  gpu_regs t = {0};
  gpu_reg r;
  REQUIRE_EQ(gpu_regs_take(&t, 0x10000, 64 * KIB, &r), 1);
  REQUIRE_EQ(r.addr, 0x10000);
  REQUIRE_EQ(r.len, 64 * KIB);
  REQUIRE_EQ(gpu_regs_take(&t, 0x10000, 64 * KIB, NULL), 0); /* the same range: shared */
  REQUIRE_EQ(gpu_regs_put(&t, 0x10000, 64 * KIB, NULL), 0);
  REQUIRE_EQ(gpu_regs_put(&t, 0x10000, 64 * KIB, &r), 1);   /* the last: unregister */
  REQUIRE_EQ(t.n, 0);
  gpu_regs_free(&t);
}
END_TEST

START_TEST(test_a_range_inside_a_registration_shares_it) {
  gpu_regs t = {0};
  gpu_reg r;
  REQUIRE_EQ(gpu_regs_take(&t, 0x100000, MIB, NULL), 1);
  REQUIRE_EQ(gpu_regs_take(&t, 0x100000 + 4096, 8192, &r), 0);
  REQUIRE_EQ(r.addr, 0x100000); /* the containing registration */
  REQUIRE_EQ(r.refs, 2);
  REQUIRE_EQ(gpu_regs_take(&t, 0x100000 + MIB - 1, 1, NULL), 0); /* its last byte */
  REQUIRE(gpu_regs_find(&t, 0x100000 + 10, 10) != NULL);
  REQUIRE(gpu_regs_find(&t, 0x100000 + MIB - 1, 2) == NULL);
  /* the outer one's owner goes first: the registration stays for the others */
  REQUIRE_EQ(gpu_regs_put(&t, 0x100000, MIB, NULL), 0);
  REQUIRE_EQ(gpu_regs_put(&t, 0x100000 + 4096, 8192, NULL), 0);
  REQUIRE_EQ(gpu_regs_put(&t, 0x100000 + MIB - 1, 1, &r), 1);
  REQUIRE_EQ(r.addr, 0x100000);
  REQUIRE_EQ(r.len, MIB);
  gpu_regs_free(&t);
}
END_TEST

START_TEST(test_a_range_overlapping_a_registration_in_part_is_ebusy) {
  gpu_regs t = {0};
  REQUIRE_EQ(gpu_regs_take(&t, 0x200000, MIB, NULL), 1);
  REQUIRE_EQ(gpu_regs_take(&t, 0x200000 - 4096, 8192, NULL), -EBUSY);  /* across its start */
  REQUIRE_EQ(gpu_regs_take(&t, 0x200000 + MIB - 1, 2, NULL), -EBUSY);  /* across its end */
  REQUIRE_EQ(gpu_regs_take(&t, 0x100000, 4 * MIB, NULL), -EBUSY);      /* around it */
  REQUIRE_EQ(gpu_regs_take(&t, 0x200000 + MIB, MIB, NULL), 1);         /* just after: fine */
  REQUIRE_EQ(gpu_regs_take(&t, 0x200000 - MIB, MIB, NULL), 1);         /* just before: fine */
  REQUIRE_EQ(t.n, 3);
  REQUIRE(t.v[0].addr < t.v[1].addr && t.v[1].addr < t.v[2].addr);    /* kept sorted */
  REQUIRE_EQ(gpu_regs_take(&t, 0x200000, 3 * MIB, NULL), -EBUSY);     /* spans two */
  gpu_regs_free(&t);
}
END_TEST

START_TEST(test_many_registrations_stay_sorted_and_found) {
  gpu_regs t = {0};
  for (uintptr_t i = 0; i < 100; i++) /* every other MiB, in a scrambled order */
    REQUIRE_EQ(gpu_regs_take(&t, ((i * 37) % 100) * 2 * MIB + 0x40000000, MIB, NULL), 1);
  for (size_t i = 1; i < t.n; i++) REQUIRE(t.v[i - 1].addr + t.v[i - 1].len <= t.v[i].addr);
  for (uintptr_t i = 0; i < 100; i++) {
    REQUIRE(gpu_regs_find(&t, i * 2 * MIB + 0x40000000 + 5, 100) != NULL);
    REQUIRE(gpu_regs_find(&t, i * 2 * MIB + 0x40000000 + MIB, 1) == NULL); /* the gaps */
  }
  for (uintptr_t i = 0; i < 100; i++)
    REQUIRE_EQ(gpu_regs_put(&t, i * 2 * MIB + 0x40000000, MIB, NULL), 1);
  REQUIRE_EQ(t.n, 0);
  gpu_regs_free(&t);
}
END_TEST

START_TEST(test_putting_an_unknown_range_is_enoent) {
  gpu_regs t = {0};
  REQUIRE_EQ(gpu_regs_put(&t, 0x1000, 4096, NULL), -ENOENT);
  REQUIRE_EQ(gpu_regs_take(&t, 0x10000, 4096, NULL), 1);
  REQUIRE_EQ(gpu_regs_put(&t, 0x10000 + 2048, 4096, NULL), -ENOENT); /* runs past it */
  REQUIRE_EQ(gpu_regs_put(&t, 0x10000, 0, NULL), -ENOENT);
  REQUIRE_EQ(t.v[0].refs, 1);
  gpu_regs_free(&t);
}
END_TEST

START_TEST(test_empty_and_wrapping_ranges_are_einval) {
  gpu_regs t = {0};
  REQUIRE_EQ(gpu_regs_take(&t, 0x1000, 0, NULL), -EINVAL);
  REQUIRE_EQ(gpu_regs_take(&t, UINTPTR_MAX - 10, 100, NULL), -EINVAL);
  REQUIRE(gpu_regs_find(&t, UINTPTR_MAX - 10, 100) == NULL);
  REQUIRE_EQ(t.n, 0);
  gpu_regs_free(&t);
}
END_TEST

START_TEST(test_ranges_overlap_only_when_they_share_a_byte) {
  REQUIRE(gpu_ranges_overlap(100, 10, 105, 10));
  REQUIRE(gpu_ranges_overlap(105, 10, 100, 10));
  REQUIRE(gpu_ranges_overlap(100, 100, 150, 1));
  REQUIRE(!gpu_ranges_overlap(100, 10, 110, 10)); /* adjacent */
  REQUIRE(!gpu_ranges_overlap(110, 10, 100, 10));
  REQUIRE(!gpu_ranges_overlap(100, 0, 100, 10)); /* empty */
}
END_TEST

START_TEST(test_registrations_cover_whole_pages) {
  uintptr_t start;
  size_t span;
  gpu_pages_around(0x10003, 1000, 4096, &start, &span);
  REQUIRE_EQ(start, 0x10000);
  REQUIRE_EQ(span, 4096);
  gpu_pages_around(0x10ff0, 0x20, 4096, &start, &span); /* across a page boundary */
  REQUIRE_EQ(start, 0x10000);
  REQUIRE_EQ(span, 8192);
  gpu_pages_around(0x20000, 3 * 4096, 4096, &start, &span); /* aligned: itself */
  REQUIRE_EQ(start, 0x20000);
  REQUIRE_EQ(span, 3 * 4096);
}
END_TEST

START_TEST(test_arena_objects_are_whole_slabs) {
  size_t b;
  REQUIRE_EQ(gpu_arena_object_bytes(1, &b), 0);
  REQUIRE_EQ(b, 4096);
  REQUIRE_EQ(gpu_arena_object_bytes(4096, &b), 0);
  REQUIRE_EQ(b, 4096);
  REQUIRE_EQ(gpu_arena_object_bytes(256 * MIB + 1, &b), 0);
  REQUIRE_EQ(b, 256 * MIB + 4096);
  REQUIRE_EQ(gpu_arena_object_bytes(0, &b), EINVAL);
  REQUIRE_EQ(gpu_arena_object_bytes(GPU_ARENA_MAX + 1, &b), EINVAL);
  REQUIRE_EQ(gpu_arena_object_bytes(SIZE_MAX, &b), EINVAL); /* no overflow */
}
END_TEST

START_TEST(test_a_heap_needs_an_aligned_arena_of_whole_pages) {
  REQUIRE_EQ(gpu_arena_check((void *)0x100000, 64 * KIB), 0);
  REQUIRE_EQ(gpu_arena_check(NULL, 64 * KIB), EINVAL);
  REQUIRE_EQ(gpu_arena_check((void *)0x100100, 64 * KIB), EINVAL); /* 256 B aligned only */
  REQUIRE_EQ(gpu_arena_check((void *)0x100000, 64 * KIB + 16), EINVAL);
  REQUIRE_EQ(gpu_arena_check((void *)0x100000, 0), EINVAL);
  REQUIRE_EQ(gpu_arena_check((void *)0x100000, GPU_ARENA_MAX + 512), EINVAL);
  REQUIRE_EQ(gpu_arena_check((void *)(UINTPTR_MAX - 511), 1024), EINVAL);
  REQUIRE_EQ(gpu_open_check((void *)0x100003, 5), 0); /* opening: any range */
  REQUIRE_EQ(gpu_open_check((void *)0x100003, 0), EINVAL);
  REQUIRE_EQ(gpu_open_check(NULL, 5), EINVAL);
}
END_TEST

START_TEST(test_pointers_translate_between_device_and_gas_inside_the_arena_only) {
  gpu_view v = {(char *)0x7f0000000000, 0x100000000000, 64 * KIB};
  REQUIRE_EQ((uintptr_t)gpu_gas(v, (void *)0x7f0000000000), 0x100000000000);
  REQUIRE_EQ((uintptr_t)gpu_gas(v, (void *)0x7f0000001234), 0x100000001234);
  REQUIRE_EQ((uintptr_t)gpu_gas(v, (void *)(0x7f0000000000 + 64 * KIB - 1)),
             0x100000000000 + 64 * KIB - 1);
  REQUIRE_EQ((uintptr_t)gpu_gas(v, (void *)(0x7f0000000000 + 64 * KIB)),
             0x7f0000000000 + 64 * KIB); /* past the end: unchanged */
  REQUIRE_EQ((uintptr_t)gpu_gas(v, (void *)0x7effffffffff), 0x7effffffffff);
  REQUIRE(gpu_gas(v, NULL) == NULL);
  REQUIRE_EQ((uintptr_t)gpu_dev(v, (void *)0x100000001234), 0x7f0000001234);
  REQUIRE_EQ((uintptr_t)gpu_dev(v, (void *)0x200000000000), 0x200000000000); /* other GAS */
  REQUIRE(gpu_dev(v, NULL) == NULL);
  for (uintptr_t off = 0; off < 64 * KIB; off += 16)
    REQUIRE_EQ((uintptr_t)gpu_dev(v, gpu_gas(v, (void *)(0x7f0000000000 + off))),
               0x7f0000000000 + off);
  gpu_view same = {(char *)0x100000000000, 0x100000000000, 64 * KIB}; /* zero-copy */
  REQUIRE_EQ((uintptr_t)gpu_gas(same, (void *)0x100000000040), 0x100000000040);
  gpu_view none = {NULL, 0, 0}; /* a dead arena's view: nothing translates */
  REQUIRE_EQ((uintptr_t)gpu_gas(none, (void *)0x1234), 0x1234);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu");
  TCase *tc = tcase_create("ranges");
  tcase_add_test(tc, test_a_new_range_asks_to_be_registered_once);
  tcase_add_test(tc, test_a_range_inside_a_registration_shares_it);
  tcase_add_test(tc, test_a_range_overlapping_a_registration_in_part_is_ebusy);
  tcase_add_test(tc, test_many_registrations_stay_sorted_and_found);
  tcase_add_test(tc, test_putting_an_unknown_range_is_enoent);
  tcase_add_test(tc, test_empty_and_wrapping_ranges_are_einval);
  tcase_add_test(tc, test_ranges_overlap_only_when_they_share_a_byte);
  tcase_add_test(tc, test_registrations_cover_whole_pages);
  tcase_add_test(tc, test_arena_objects_are_whole_slabs);
  tcase_add_test(tc, test_a_heap_needs_an_aligned_arena_of_whole_pages);
  tcase_add_test(tc, test_pointers_translate_between_device_and_gas_inside_the_arena_only);
  suite_add_tcase(s, tc);
  return s;
}
