/* SPDX-License-Identifier: MIT */
/*
 * coll/half.h - exact conversions between float and the two 16-bit floats,
 * IEEE binary16 ("half") and bfloat16, in plain C.
 *
 * Widening is exact.  Narrowing rounds to nearest, ties to even, as IEEE
 * does: too large becomes infinity, too small a subnormal or zero, NaN stays
 * NaN (made quiet, sign and top payload bits kept).  No F16C or AVX-512
 * needed: every step is an integer or float operation with a plain SSE2 (or
 * NEON) counterpart and every choice a select, so loops over these
 * vectorize; bit copies go through memcpy, which compiles to nothing.
 *
 * Float to binary16 lets one float addition do the rounding (the method of
 * Maratyszcza's FP16 library): it needs the default rounding mode, and each
 * float operation is its own assignment, which C rounds to float even where
 * the hardware computes wider (FLT_EVAL_METHOD != 0).
 */
#ifndef CB_COLL_HALF_H
#define CB_COLL_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t cb_f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float cb_bits_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/*
 * A select as a mask, where an operand is float arithmetic: written as a
 * ?: gcc moves the arithmetic into a branch and then (under its default
 * -ftrapping-math) will not execute it unconditionally again, so the loop
 * does not vectorize.  All ones in @mask picks @a.
 */
static inline uint32_t cb_half_pick(uint32_t mask, uint32_t a, uint32_t b)
{
	return (a & mask) | (b & ~mask);
}

static inline float cb_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	/* exponent and mantissa; signed, as SSE2 compares only signed */
	int32_t em = h & 0x7fff;
	/* Normal: move the fields into place, rebias the exponent 15 -> 127. */
	uint32_t bits = ((uint32_t)em << 13) + ((127u - 15u) << 23);
	/* Infinity and NaN: exponent all ones, the payload kept. */
	bits = em >= 0x7c00 ? bits + ((128u - 16u) << 23) : bits;
	/* Zero and subnormals are em * 2^-24: exact in float. */
	float sub = (float)em * 0x1p-24f;
	bits = cb_half_pick(-(uint32_t)(em < 0x0400), cb_f32_bits(sub), bits);
	return cb_bits_f32(bits | sign);
}

static inline uint16_t cb_f32_to_f16(float f)
{
	uint32_t u = cb_f32_bits(f);
	uint32_t sign = (u >> 16) & 0x8000u;
	int32_t a = (int32_t)(u & 0x7fffffffu);
	/* x = 4|f|, except that scaling up by 2^112 first overflows to
	 * infinity exactly when |f| >= 2^16, which binary16 cannot hold
	 * (65520 <= |f| < 2^16 rounds up to infinity below). */
	float big = cb_bits_f32((uint32_t)a) * 0x1p112f;
	float x = big * 0x1p-110f;
	/* Add 2^(e + 15 - 127), e being the exponent of |f| but at least
	 * 113, binary16's smallest normal one: the ulp of the sum is then
	 * 4 times binary16's ulp at |f|, so the float addition rounds x to
	 * binary16's precision, ties to even (subnormals included). */
	int32_t e = a & 0x7f800000;
	e = e < (113 << 23) ? (113 << 23) : e;
	float sum = x + cb_bits_f32((uint32_t)e + (15u << 23));
	uint32_t b = cb_f32_bits(sum);
	/* Read the fields off the sum: its exponent's low 5 bits are
	 * binary16's exponent less one (0 for subnormals) and its 11 low
	 * mantissa bits hold the rounded mantissa with the leading one,
	 * whose carry into bit 10 adds that one back; infinity comes out
	 * as 0x7c00. */
	uint32_t r = ((b >> 13) & 0x7c00u) + (b & 0x0fffu);
	r = cb_half_pick(-(uint32_t)(a > 0x7f800000),
	                 0x7e00u | ((u >> 13) & 0x03ffu), r);
	return (uint16_t)(sign | r);
}

static inline float cb_bf16_to_f32(uint16_t h)
{
	return cb_bits_f32((uint32_t)h << 16);
}

static inline uint16_t cb_f32_to_bf16(float f)
{
	uint32_t u = cb_f32_bits(f);
	/* Round away the low 16 bits, ties to even; the carry reaches the
	 * exponent, and past the largest finite value gives infinity. */
	uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
	/* NaN must not round into infinity (or the sign): quiet it. */
	r = (u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x0040u : r;
	return (uint16_t)r;
}

#endif
