/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_reduce.c - every reduction kernel against a scalar
 * reference, at lengths around the vector widths, in place and out of place,
 * with wrap-around for integers and negative values for min and max; the
 * byte types on every pair of inputs; the 16-bit float conversions on every
 * bit pattern, their rounding against a reference in double.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll/half.h"
#include "coll/reduce.h"

#define N 1031

static int64_t ref(enum cb_op op, int64_t a, int64_t b)
{
	switch (op) {
	case CB_OP_SUM:
		return a + b;
	case CB_OP_PROD:
		return a * b;
	case CB_OP_MIN:
		return a < b ? a : b;
	default:
		return a > b ? a : b;
	}
}

static int64_t val(int which, size_t i)
{
	/* Small signed integers, exact in every type (uint8 wraps them). */
	return which ? (int64_t)((i * 7) % 23) - 11
	             : (int64_t)((i * 5) % 19) - 9;
}

/* The reference takes the values as the type holds them, so uint8's min
 * and max compare the wrapped (large) values, as the kernel must. */
#define TEST_TYPE(T, dt)                                                       \
	do {                                                                   \
		T a[N], b[N], d[N];                                            \
		for (int op = 0; op < CB_OP_COUNT; op++) {                     \
			for (size_t n = 0; n < N; n += (n < 40 ? 1 : 97)) {    \
				for (size_t i = 0; i < N; i++) {               \
					a[i] = (T)val(0, i);                   \
					b[i] = (T)val(1, i);                   \
					d[i] = (T)-77;                         \
				}                                              \
				cb_reduce(dt, op, d, a, b, n);                 \
				int bad = 0;                                   \
				for (size_t i = 0; i < n; i++)                 \
					bad |= d[i] != (T)ref(op,              \
					                      (T)val(0, i),    \
					                      (T)val(1, i));   \
				for (size_t i = n; i < N; i++)                 \
					bad |= d[i] != (T)-77;                 \
				CHECK(!bad);                                   \
				/* in place: dst == a */                       \
				cb_reduce(dt, op, a, a, b, n);                 \
				CHECK(!memcmp(a, d, n * sizeof(T)));           \
			}                                                      \
		}                                                              \
	} while (0)

/* int8 and uint8 on all 65536 pairs: wrap mod 256, signed or unsigned
 * order for min and max. */
static void test_bytes(void)
{
	static uint8_t a[65536], b[65536], d[65536];

	for (int i = 0; i < 65536; i++) {
		a[i] = (uint8_t)(i >> 8);
		b[i] = (uint8_t)i;
	}
	for (int op = 0; op < CB_OP_COUNT; op++) {
		int bad = 0;
		cb_reduce(CB_DT_INT8, op, d, a, b, 65536);
		for (int i = 0; i < 65536; i++)
			bad |= (int8_t)d[i] !=
			       (int8_t)(uint8_t)ref(op, (int8_t)a[i],
			                            (int8_t)b[i]);
		CHECK(!bad);
		bad = 0;
		cb_reduce(CB_DT_UINT8, op, d, a, b, 65536);
		for (int i = 0; i < 65536; i++)
			bad |= d[i] != (uint8_t)ref(op, a[i], b[i]);
		CHECK(!bad);
	}
}

/*
 * Reference 16-bit floats, in double: a format with @mbits fraction bits
 * and @ebits exponent bits (binary16: 10, 5; bfloat16: 7, 8).
 */
struct fmt {
	int mbits, ebits;
};
static const struct fmt F16 = { 10, 5 }, BF16 = { 7, 8 };

static int is_nan16(struct fmt f, uint16_t h)
{
	uint16_t emask = (uint16_t)(((1u << f.ebits) - 1) << f.mbits);
	return (h & emask) == emask && (h & ((1u << f.mbits) - 1));
}

static double decode(struct fmt f, uint16_t h)
{
	int bias = (1 << (f.ebits - 1)) - 1;
	int e = (h >> f.mbits) & ((1 << f.ebits) - 1);
	double m = h & ((1u << f.mbits) - 1);
	double v;

	if (e == (1 << f.ebits) - 1)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, 1 - bias - f.mbits);
	else
		v = ldexp(m + ldexp(1, f.mbits), e - bias - f.mbits);
	return (h >> 15) ? -v : v;
}

/* x rounded to the format, to nearest, ties to even; NaN as 0x7fff. */
static uint16_t encode(struct fmt f, double x)
{
	int bias = (1 << (f.ebits - 1)) - 1, emin = 1 - bias;
	uint16_t sign = signbit(x) ? 0x8000 : 0;
	double ax = fabs(x), r;
	int e;

	if (isnan(x))
		return 0x7fff;
	if (ax == 0)
		return sign;
	e = isinf(ax) ? bias + 1 : ilogb(ax);
	if (e < emin)
		e = emin;
	r = rint(ldexp(ax, f.mbits - e)); /* exact scaling, then RNE */
	if (r >= ldexp(1, f.mbits + 1)) {
		r /= 2; /* rounded up to the next binade: exact */
		e++;
	}
	if (e > bias)
		return sign | (uint16_t)(((1u << f.ebits) - 1) << f.mbits);
	if (r < ldexp(1, f.mbits)) /* subnormal */
		return sign | (uint16_t)r;
	return sign | (uint16_t)((e + bias) << f.mbits) |
	       (uint16_t)(r - ldexp(1, f.mbits));
}

static float to32(struct fmt f, uint16_t h)
{
	return f.ebits == 5 ? cb_f16_to_f32(h) : cb_bf16_to_f32(h);
}

static uint16_t to16(struct fmt f, float x)
{
	return f.ebits == 5 ? cb_f32_to_f16(x) : cb_f32_to_bf16(x);
}

/* Same value, or both NaN (a NaN's payload is not specified). */
static int same16(struct fmt f, uint16_t got, uint16_t want)
{
	if (want == 0x7fff || is_nan16(f, want))
		return is_nan16(f, got);
	return got == want;
}

static void test_conversions(struct fmt f)
{
	int bad_wide = 0, bad_trip = 0, bad_nan = 0;

	/* Widening is exact on all 65536 patterns; narrowing it back gives
	 * the same pattern (a NaN: NaN, quiet, with the same sign and the
	 * quiet payload bits kept). */
	for (uint32_t h = 0; h < 65536; h++) {
		float x = to32(f, (uint16_t)h);
		double want = decode(f, (uint16_t)h);
		uint16_t back = to16(f, x);
		uint16_t quiet = (uint16_t)(1u << (f.mbits - 1));
		if (isnan(want)) {
			bad_wide |= !isnan(x) || !signbit(x) != !(h >> 15);
			bad_nan |= !is_nan16(f, back) ||
			           (back | quiet) != (h | quiet) ||
			           !(back & quiet);
			continue;
		}
		bad_wide |= (double)x != want || !signbit(x) != !(h >> 15);
		bad_trip |= back != h;
	}
	CHECK(!bad_wide);
	CHECK(!bad_trip);
	CHECK(!bad_nan);

	/* Every halfway point between neighbours (exact in float) goes to
	 * the even one, and one float ulp either side to the nearer one;
	 * past the largest finite value, halfway to the next binade is
	 * infinity. */
	int bad_tie = 0, bad_near = 0;
	uint16_t inf = (uint16_t)(((1u << f.ebits) - 1) << f.mbits);
	for (uint32_t h = 0; h < inf; h++) {
		for (int neg = 0; neg < 2; neg++) {
			uint16_t lo = (uint16_t)(h | (neg ? 0x8000u : 0));
			uint16_t hi = (uint16_t)(lo + 1);
			/* past the largest finite value: the next binade */
			double next = h + 1 < inf ? decode(f, hi)
			                          : ldexp(neg ? -1 : 1,
			                                  1 << (f.ebits - 1));
			double mid = (decode(f, lo) + next) / 2;
			float m = (float)mid;
			if ((double)m != mid) {
				bad_tie = 1;
				continue;
			}
			uint16_t even = (lo & 1) ? hi : lo;
			bad_tie |= to16(f, m) != even;
			bad_near |= to16(f, nextafterf(m, 0.0f)) != lo;
			bad_near |=
			        to16(f, nextafterf(m, neg ? -INFINITY
			                                  : INFINITY)) != hi;
		}
	}
	CHECK(!bad_tie);
	CHECK(!bad_near);

	/* A sample of all float patterns (a stride that visits every
	 * exponent and many mantissas) against the reference. */
	int bad_sample = 0;
	for (uint64_t u = 0; u < (1ull << 32); u += 997) {
		float x = cb_bits_f32((uint32_t)u);
		bad_sample |= !same16(f, to16(f, x), encode(f, x));
	}
	CHECK(!bad_sample);
}

/* Hand-picked cases, so a failure reads plainly. */
static void test_conversion_cases(void)
{
	/* binary16: overflow, the largest value, rounding at the top */
	CHECK(cb_f32_to_f16(65504.0f) == 0x7bff);
	CHECK(cb_f32_to_f16(65519.99f) == 0x7bff);
	CHECK(cb_f32_to_f16(65520.0f) == 0x7c00);
	CHECK(cb_f32_to_f16(-65520.0f) == 0xfc00);
	CHECK(cb_f32_to_f16(1e10f) == 0x7c00);
	CHECK(cb_f32_to_f16(3.4e38f) == 0x7c00);
	CHECK(cb_f32_to_f16(INFINITY) == 0x7c00);
	CHECK(cb_f32_to_f16(-INFINITY) == 0xfc00);
	CHECK(is_nan16(F16, cb_f32_to_f16(NAN)));
	CHECK(is_nan16(F16, cb_f32_to_f16(cb_bits_f32(0x7f800001u))));
	CHECK(is_nan16(F16, cb_f32_to_f16(cb_bits_f32(0xff800001u))));
	/* integers: exact to 2048, then ties to even */
	CHECK(cb_f32_to_f16(2048.0f) == 0x6800);
	CHECK(cb_f32_to_f16(2049.0f) == 0x6800);
	CHECK(cb_f32_to_f16(2051.0f) == 0x6802);
	CHECK(cb_f32_to_f16(1.0f) == 0x3c00 && cb_f32_to_f16(-2.0f) == 0xc000);
	/* subnormals: 2^-24 is the smallest; half of it is a tie to zero */
	CHECK(cb_f32_to_f16(0x1p-24f) == 0x0001);
	CHECK(cb_f32_to_f16(0x1p-25f) == 0x0000);
	CHECK(cb_f32_to_f16(-0x1p-25f) == 0x8000);
	CHECK(cb_f32_to_f16(0x1.000002p-25f) == 0x0001);
	CHECK(cb_f32_to_f16(0x1.8p-24f) == 0x0002);
	CHECK(cb_f32_to_f16(0x1.4p-23f) == 0x0002);
	CHECK(cb_f32_to_f16(0x1p-14f) == 0x0400);
	CHECK(cb_f32_to_f16(0x1.ff8p-15f) == 0x03ff);
	CHECK(cb_f32_to_f16(0x1.ffcp-15f) == 0x0400); /* tie, up to even */
	CHECK(cb_f32_to_f16(0x1.ff4p-15f) == 0x03fe); /* tie, down to even */
	CHECK(cb_f32_to_f16(cb_bits_f32(1)) == 0x0000);
	CHECK(cb_f32_to_f16(-0.0f) == 0x8000);
	CHECK(cb_f16_to_f32(0x0001) == 0x1p-24f);
	CHECK(cb_f16_to_f32(0x03ff) == 0x1.ff8p-15f);
	CHECK(cb_f16_to_f32(0x7bff) == 65504.0f);
	CHECK(isinf(cb_f16_to_f32(0xfc00)) && cb_f16_to_f32(0xfc00) < 0);
	/* bfloat16 */
	CHECK(cb_f32_to_bf16(1.0f) == 0x3f80);
	CHECK(cb_f32_to_bf16(257.0f) == 0x4380); /* tie, down to even 256 */
	CHECK(cb_f32_to_bf16(259.0f) == 0x4382); /* tie, up to even 260 */
	CHECK(cb_f32_to_bf16(3.4028235e38f) == 0x7f80);
	CHECK(cb_f32_to_bf16(-3.4028235e38f) == 0xff80);
	CHECK(cb_f32_to_bf16(0x1.fep127f) == 0x7f7f);
	CHECK(cb_f32_to_bf16(INFINITY) == 0x7f80);
	CHECK(is_nan16(BF16, cb_f32_to_bf16(cb_bits_f32(0x7fffffffu))));
	CHECK(is_nan16(BF16, cb_f32_to_bf16(cb_bits_f32(0x7f800001u))));
	CHECK(cb_f32_to_bf16(cb_bits_f32(0xffff0000u)) == 0xffff);
	CHECK(cb_f32_to_bf16(cb_bits_f32(0x00008000u)) == 0x0000);
	CHECK(cb_f32_to_bf16(cb_bits_f32(0x00018000u)) == 0x0002);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint16_t rand16(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint16_t)(rng >> 24);
}

/* What the kernel must give: the double result (exact for sums and
 * products of two binary16, and rounded at most once more before the
 * 16-bit rounding for bfloat16, harmlessly: 53 >= 2 * 8 + 2) rounded once;
 * min and max pick an operand as the float kernels do. */
static uint16_t ref16(struct fmt f, enum cb_op op, uint16_t a, uint16_t b)
{
	double x = decode(f, a), y = decode(f, b);

	switch (op) {
	case CB_OP_SUM:
		return encode(f, x + y);
	case CB_OP_PROD:
		return encode(f, x * y);
	case CB_OP_MIN:
		return y < x ? b : (isnan(x) ? 0x7fff : a);
	default:
		return y > x ? b : (isnan(x) ? 0x7fff : a);
	}
}

static void test_kernels16(struct fmt f, enum cb_dtype dt)
{
	enum { M = 1 << 16 };
	static uint16_t a[M], b[M], d[M];

	for (int op = 0; op < CB_OP_COUNT; op++) {
		/* random patterns (NaN, inf, subnormals included), and pairs
		 * of near exponents, where sums round and tie */
		for (int round = 0; round < 16; round++) {
			for (int i = 0; i < M; i++) {
				a[i] = rand16();
				b[i] = rand16();
				if (round & 1)
					b[i] = (uint16_t)((a[i] & 0xff80) ^
					                  (b[i] & 0x807f));
			}
			int bad = 0;
			cb_reduce(dt, op, d, a, b, M);
			for (int i = 0; i < M; i++)
				bad |= !same16(f, d[i],
				               ref16(f, op, a[i], b[i]));
			CHECK(!bad);
		}
		/* lengths around the vector widths, in place, the tail
		 * untouched */
		for (size_t n = 0; n < N; n += (n < 40 ? 1 : 97)) {
			for (size_t i = 0; i < N; i++) {
				a[i] = rand16();
				b[i] = rand16();
				d[i] = 0x5555;
			}
			cb_reduce(dt, op, d, a, b, n);
			int bad = 0;
			for (size_t i = 0; i < n; i++)
				bad |= !same16(f, d[i],
				               ref16(f, op, a[i], b[i]));
			for (size_t i = n; i < N; i++)
				bad |= d[i] != 0x5555;
			CHECK(!bad);
			cb_reduce(dt, op, a, a, b, n);
			CHECK(!memcmp(a, d, n * sizeof(*a)));
		}
	}
	/* overflow to infinity with the right sign */
	uint16_t big = encode(f, f.ebits == 5 ? 40000.0 : 0x1.8p127);
	uint16_t x[2] = { big, big }, y[2] = { big, (uint16_t)(big ^ 0x8000) },
	         z[2];
	cb_reduce(dt, CB_OP_SUM, z, x, x, 2);
	CHECK(z[0] == encode(f, INFINITY));
	cb_reduce(dt, CB_OP_PROD, z, x, y, 2);
	CHECK(z[0] == encode(f, INFINITY) && z[1] == encode(f, -INFINITY));
}

int main(void)
{
	TEST_TYPE(float, CB_DT_FLOAT32);
	TEST_TYPE(double, CB_DT_FLOAT64);
	TEST_TYPE(int32_t, CB_DT_INT32);
	TEST_TYPE(int64_t, CB_DT_INT64);
	TEST_TYPE(int8_t, CB_DT_INT8);
	TEST_TYPE(uint8_t, CB_DT_UINT8);
	test_bytes();

	/* Integer sums and products wrap like the hardware. */
	int32_t x[3] = { INT32_MAX, INT32_MIN, 65536 }, y[3] = { 1, -1, 65536 },
	        z[3];
	cb_reduce(CB_DT_INT32, CB_OP_SUM, z, x, y, 3);
	CHECK(z[0] == INT32_MIN && z[1] == INT32_MAX);
	cb_reduce(CB_DT_INT32, CB_OP_PROD, z, x, y, 3);
	CHECK(z[2] == 0);
	int64_t p[1] = { INT64_MAX }, q[1] = { 1 }, r[1];
	cb_reduce(CB_DT_INT64, CB_OP_SUM, r, p, q, 1);
	CHECK(r[0] == INT64_MIN);
	/* min/max keep the sign */
	int32_t m1[2] = { -5, 7 }, m2[2] = { 3, -9 }, mo[2];
	cb_reduce(CB_DT_INT32, CB_OP_MIN, mo, m1, m2, 2);
	CHECK(mo[0] == -5 && mo[1] == -9);
	cb_reduce(CB_DT_INT32, CB_OP_MAX, mo, m1, m2, 2);
	CHECK(mo[0] == 3 && mo[1] == 7);

	test_conversion_cases();
	test_conversions(F16);
	test_conversions(BF16);
	test_kernels16(F16, CB_DT_FLOAT16);
	test_kernels16(BF16, CB_DT_BFLOAT16);
	return check_result("reduce");
}
