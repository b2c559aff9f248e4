// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzer's arguments: pointers of every kind and values, valid or not.
 */
#include "fuzz.h"

/* ---- pointers ---- */

unsigned char *rw_page(struct thr *t, int n)
{
	return t->arena + (size_t)n * FZ_PAGE;
}

unsigned char *none_page(struct thr *t)
{
	return rw_page(t, FZ_RW_PAGES);
}

unsigned char *ro_page(struct thr *t)
{
	return rw_page(t, FZ_RW_PAGES + 1);
}

/* kernel and otherwise unusable addresses, for the u64 fields */
static const uint64_t kaddrs[] = {
	0xffff888000000000ULL, 0xffffffff81000000ULL, 0xffffffffff600000ULL,
	0xffffffffffffffffULL, 0xfffffffffffff000ULL, 0x8000000000000000ULL,
	0x0000800000000000ULL, 0x00007ffffffff000ULL, 0xdead000000000000ULL,
	0xffffc90000000000ULL, 0xffffea0000000000ULL, 0x0000000100000000ULL,
	0xc0000000ULL, 0xffffe000ULL, 0xfffff000ULL, 1, 8, 4095,
};

const char *const ptr_name[] = {
	"good", "misaligned", "NULL", "straddle", "unmapped", "read-only",
	"kernel", "random",
};

enum ptr_kind pick_kind(struct thr *t, unsigned int good_per_1000)
{
	if (chance(t, good_per_1000))
		return chance(t, 850) ? P_GOOD : P_MISALIGNED;
	return (enum ptr_kind)(2 + below(t, 6));
}

/*
 * A user address of kind @k for an object of @size bytes at @off in the
 * good area; *@w is where to write its contents (NULL: not writable).
 * @wide: for the __u64 address fields, which hold 64 bits even in 32-bit
 * processes.  Random addresses are never ones this process may have
 * mapped (a write there would corrupt the fuzzer, not the kernel): below
 * mmap_min_addr, the top page of a 32-bit space, or (64-bit) anything
 * non-canonical.
 */
uint64_t make_ptr_w(struct thr *t, enum ptr_kind k, size_t off,
		    size_t size, void **w, int wide)
{
	unsigned char *p;
	size_t cut;

	*w = NULL;
	switch (k) {
	case P_GOOD:
		p = rw_page(t, 0) + off;
		*w = p;
		return (uintptr_t)p;
	case P_MISALIGNED:
		p = rw_page(t, 0) + off + 1 + below(t, 7);
		*w = p;
		return (uintptr_t)p;
	case P_NULL:
		return 0;
	case P_STRADDLE:
		/* the first 1..size-1 bytes mapped, the rest not */
		cut = size > 1 ? 1 + below(t, size - 1) : 1;
		return (uintptr_t)(none_page(t) - cut);
	case P_NONE:
		return (uintptr_t)(none_page(t) + below(t, 64) * 8);
	case P_RO:
		return (uintptr_t)(ro_page(t) + below(t, 16) * 8);
	case P_KERNEL:
		if (sizeof(void *) == 4 && !wide)
			return 0xffffe000u + below(t, 0x2000);
		return kaddrs[below(t, ARRAY_SIZE(kaddrs))];
	case P_RANDOM:
	default:
		if (chance(t, 500))
			return 0x1000 + below(t, 0xf000);
		if (sizeof(void *) == 4 && !wide)
			return 0xffffe000u + below(t, 0x2000);
		/* bits 47..62 not all equal: non-canonical */
		return (rnd(t) & ~(0xffffULL << 47)) | (1ULL << 50) |
		       (rnd(t) & (1ULL << 63));
	}
}

uint64_t make_ptr(struct thr *t, enum ptr_kind k, size_t off,
		  size_t size, void **w)
{
	return make_ptr_w(t, k, off, size, w, 0);
}

/* what the straddle pointer's mapped bytes hold: the start of @src */
void fill_straddle(struct thr *t, uint64_t p, const void *src,
		   size_t size)
{
	unsigned char *q = (unsigned char *)(uintptr_t)p;
	size_t n = (size_t)(none_page(t) - q);

	if (q < none_page(t) && n < size)
		memcpy(q, src, n);
}

/* An address for an ioctl argument: in 32-bit processes only 32 bits. */
unsigned long ioc_arg(uint64_t p)
{
	return (unsigned long)p;
}

/* ---- values ---- */

int64_t rand_sec(struct thr *t)
{
	static const int64_t special[] = {
		0, 1, 2, -1, INT32_MAX, (int64_t)INT32_MAX + 1, INT32_MIN,
		INT64_MAX, INT64_MIN, 9223372036LL, 9223372037LL,
		4294967295LL, 0x7fffffffffffLL, 86400LL * 365 * 300,
	};

	switch (below(t, 4)) {
	case 0:
		return 0;
	case 1:
		return (int64_t)below(t, 4);
	case 2:
		return special[below(t, ARRAY_SIZE(special))];
	default:
		return (int64_t)rnd(t);
	}
}

int64_t rand_nsec(struct thr *t)
{
	static const int64_t special[] = {
		0, 1, 999999999, 1000000000, -1, INT64_MIN, INT64_MAX,
		(int64_t)1 << 32, ((int64_t)1 << 32) + 5, 0xffffffffLL,
	};

	switch (below(t, 4)) {
	case 0:
		return (int64_t)below(t, 3000000);
	case 1:
		return (int64_t)below(t, NSEC_PER_SEC);
	case 2:
		return special[below(t, ARRAY_SIZE(special))];
	default:
		return (int64_t)rnd(t);
	}
}

uint32_t rand_flags(struct thr *t)
{
	switch (below(t, 5)) {
	case 0:
	case 1:
		return (uint32_t)below(t, 8);
	case 2:
		return 1u << below(t, 32);
	case 3:
		return (uint32_t)below(t, 8) | (1u << below(t, 32));
	default:
		return (uint32_t)rnd(t);
	}
}

/* settime's pad: zero, mostly */
uint32_t rand_pad(struct thr *t)
{
	static const uint32_t odd[] = { 1, 2, 64, 0x80000000u, 0xffffffffu };

	if (chance(t, 900))
		return 0;
	return chance(t, 500) ? odd[below(t, ARRAY_SIZE(odd))] :
				(uint32_t)rnd(t);
}

/* CREATE's flags: O_CLOEXEC and O_NONBLOCK, mostly */
uint32_t rand_create_flags(struct thr *t)
{
	if (chance(t, 850))
		return (chance(t, 500) ? O_CLOEXEC : 0) |
		       (chance(t, 900) ? O_NONBLOCK : 0);
	return rand_flags(t);
}

uint64_t rand_u64(struct thr *t)
{
	static const uint64_t special[] = {
		0, 1, 2, 1000, 1000000, 999999999, 1000000000,
		INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX,
		UINT64_MAX - 1, 1ULL << 32, 10000000,
	};

	switch (below(t, 3)) {
	case 0:
		return special[below(t, ARRAY_SIZE(special))];
	case 1:
		return below(t, 20000000);
	default:
		return rnd(t);
	}
}

int32_t rand_clock(struct thr *t)
{
	static const int32_t clocks[] = {
		CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
		CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM,
	};
	static const int32_t odd[] = {
		-1, INT32_MIN, INT32_MAX, 2, 3, 4, 5, 6, 10, 11, 12, 16, 31,
		32, 63, 64, 65, -2, -6, ~(3 << 3) | 3, (int32_t)0xfffffffe,
	};

	if (chance(t, 600))
		return clocks[below(t, ARRAY_SIZE(clocks))];
	if (chance(t, 700))
		return odd[below(t, ARRAY_SIZE(odd))];
	return (int32_t)rnd(t);
}
