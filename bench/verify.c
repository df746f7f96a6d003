/* SPDX-License-Identifier: MIT */
/*
 * bench/verify.c - inputs and expected results for every collective; the
 * value choices are explained in bench/verify.h.
 *
 * Everything here is plain scalar code on integers: the expected values must
 * not share a bug with the kernels (coll/reduce.c) or the 16-bit float
 * conversions (coll/half.h) they check, so floats are encoded from sign,
 * integer magnitude and power of two by hand.
 */
#include "bench/verify.h"

#include <string.h>

/* Inputs of reducing collectives repeat with the index modulo this prime,
 * so expected values are computed once per residue. */
#define PERIOD 4093u
/* Residues whose expected values are computed at a time (on the stack). */
#define CHUNK 512u
/* Float sums: at most this many ranks contribute at any index. */
#define SUM_RANKS 256

/* splitmix64's finalizer: a bijection that mixes every bit. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* How a datatype is laid out; floats as IEEE binary formats. */
struct kind {
	int bytes;
	int flt;          /* a float format; else an integer */
	int sgn;          /* integers: signed */
	int mbits, ebits; /* floats: fraction and exponent bits */
	int64_t sum_amp;  /* floats: sum inputs in -sum_amp..sum_amp */
	int64_t mm_amp;   /* floats: min/max inputs in -mm_amp..mm_amp */
};

static const struct kind kinds[CB_DT_COUNT] = {
	[CB_DT_FLOAT32] = { .bytes = 4, .flt = 1, .mbits = 23, .ebits = 8 },
	[CB_DT_FLOAT64] = { .bytes = 8, .flt = 1, .mbits = 52, .ebits = 11 },
	[CB_DT_FLOAT16] = { .bytes = 2, .flt = 1, .mbits = 10, .ebits = 5 },
	[CB_DT_BFLOAT16] = { .bytes = 2, .flt = 1, .mbits = 7, .ebits = 8 },
	[CB_DT_INT8] = { .bytes = 1, .sgn = 1 },
	[CB_DT_UINT8] = { .bytes = 1 },
	[CB_DT_INT32] = { .bytes = 4, .sgn = 1 },
	[CB_DT_INT64] = { .bytes = 8, .sgn = 1 },
};

static struct kind kind_of(enum cb_dtype dt)
{
	struct kind k = kinds[(unsigned)dt < CB_DT_COUNT ? dt : CB_DT_INT64];

	/* A float holds every integer up to 2^(mbits + 1) exactly: min and
	 * max inputs span that, sum inputs 1/SUM_RANKS of it, so SUM_RANKS of
	 * them still sum exactly (bench/verify.h's table). */
	if (k.flt) {
		k.mm_amp = (int64_t)1 << (k.mbits + 1);
		k.sum_amp = k.mm_amp / SUM_RANKS;
	}
	return k;
}

static uint64_t width_mask(const struct kind *k)
{
	return k->bytes == 8 ? ~0ull : (1ull << (8 * k->bytes)) - 1;
}

/* An integer cut to the type's width, as the type reads it back. */
static int64_t int_norm(const struct kind *k, uint64_t x)
{
	uint64_t top = 1ull << (8 * k->bytes - 1);

	x &= width_mask(k);
	if (k->sgn && (x & top))
		return (int64_t)(x - top) - (int64_t)(top - 1) - 1;
	return (int64_t)x;
}

/* The bits of (-1)^neg * mag * 2^e2 in the float format; infinity when
 * too large.  Callers pass only values the format holds exactly, and no
 * magnitude below 1: no rounding, no subnormals.  Zero is +0. */
static uint64_t fp_bits(const struct kind *k, int neg, uint64_t mag, int64_t e2)
{
	uint64_t sign = (uint64_t)neg << (k->mbits + k->ebits);
	int64_t bias = (1 << (k->ebits - 1)) - 1;
	int64_t e;
	uint64_t frac;
	int p = 0;

	if (!mag)
		return 0;
	while (mag >> (p + 1))
		p++;
	e = p + e2;
	if (e > bias)
		return sign | (((1ull << k->ebits) - 1) << k->mbits);
	frac = p >= k->mbits ? mag >> (p - k->mbits) : mag << (k->mbits - p);
	frac &= (1ull << k->mbits) - 1;
	return sign | ((uint64_t)(e + bias) << k->mbits) | frac;
}

/* An integer value (within the type's exact range) as the type's bits. */
static uint64_t encode(const struct kind *k, int64_t v)
{
	if (!k->flt)
		return (uint64_t)v & width_mask(k);
	return fp_bits(k, v < 0, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, 0);
}

static void put(void *buf, size_t i, int bytes, uint64_t x)
{
	char *p = (char *)buf + i * (size_t)bytes;
	uint8_t b = (uint8_t)x;
	uint16_t h = (uint16_t)x;
	uint32_t w = (uint32_t)x;

	switch (bytes) {
	case 1:
		memcpy(p, &b, 1);
		break;
	case 2:
		memcpy(p, &h, 2);
		break;
	case 4:
		memcpy(p, &w, 4);
		break;
	default:
		memcpy(p, &x, 8);
		break;
	}
}

static uint64_t get(const void *buf, size_t i, int bytes)
{
	const char *p = (const char *)buf + i * (size_t)bytes;
	uint8_t b;
	uint16_t h;
	uint32_t w;
	uint64_t x;

	switch (bytes) {
	case 1:
		memcpy(&b, p, 1);
		return b;
	case 2:
		memcpy(&h, p, 2);
		return h;
	case 4:
		memcpy(&w, p, 4);
		return w;
	default:
		memcpy(&x, p, 8);
		return x;
	}
}

/* ---- data: what the moving collectives carry ---- */

/* Element @j from @src (to @dst for alltoall, else -1): hashed bits; a
 * float's exponent made normal, so the bits are a plain finite value. */
static uint64_t data_bits(const struct kind *k, int src, int dst, size_t j)
{
	uint64_t key = mix64(0xda7a000000000000ull ^
	                     ((uint64_t)(uint32_t)src << 32) ^ (uint32_t)dst);
	uint64_t x = mix64(key + j) & width_mask(k);
	uint64_t emask, e;

	if (!k->flt)
		return x;
	emask = ((1ull << k->ebits) - 1) << k->mbits;
	e = x & emask;
	if (e == emask) /* infinity or NaN: drop the exponent's top bit */
		x ^= 1ull << (k->mbits + k->ebits - 1);
	else if (!e) /* zero or subnormal */
		x |= 1ull << k->mbits;
	return x;
}

enum walk { FILL, POISON, CHECK };

/* Fill, poison or check @cnt elements of @buf from @off on, that hold
 * element 0.. of @src's data (to @dst). */
static uint64_t walk_data(const struct kind *k, enum walk w, int src, int dst,
                          void *buf, size_t off, size_t cnt)
{
	uint64_t wrong = 0;

	for (size_t j = 0; j < cnt; j++) {
		uint64_t want = data_bits(k, src, dst, j);
		if (w == CHECK)
			wrong += get(buf, off + j, k->bytes) != want;
		else
			put(buf, off + j, k->bytes, w == FILL ? want : ~want);
	}
	return wrong;
}

/* ---- inputs: what the reducing collectives reduce ---- */

struct red {
	struct kind k;
	enum cb_op op;
	int nin;    /* ranks reduced */
	int stride; /* float sums: only every stride-th rank is non-zero */
};

static struct red red_of(const struct cb_verify *v)
{
	int nin = v->nin > 0 && v->nin < v->n ? v->nin : v->n;
	struct red r = { kind_of(v->dtype), v->op, nin < 1 ? 1 : nin, 1 };

	r.stride = (r.nin + SUM_RANKS - 1) / SUM_RANKS;
	return r;
}

/* Index @i's sign: negate (complement) every input, or for prod rank 0's. */
static int flipped(size_t i)
{
	return (int)(mix64((uint64_t)i ^ 0x5167000000000000ull) >> 63);
}

/* Rank @g's input at an index of residue @res (mod PERIOD), flipped or
 * not, as an integer the type holds. */
static int64_t input_at(const struct red *r, int g, uint32_t res, int flip)
{
	uint64_t h = mix64(((uint64_t)r->op << 56) ^
	                   ((uint64_t)(uint32_t)g << 16) ^ res);
	static const int8_t pow2[8] = { 2, 2, -1, -1, 1, 1, 1, 1 };
	int64_t x;

	if (!r->k.flt) {
		x = int_norm(&r->k, r->op == CB_OP_PROD ? h | 1 : h);
		if (!flip)
			return x;
		if (r->op == CB_OP_PROD) /* an odd value stays odd */
			return g ? x : int_norm(&r->k, 0 - (uint64_t)x);
		return int_norm(&r->k, ~(uint64_t)x);
	}
	switch (r->op) {
	case CB_OP_SUM:
		x = (int64_t)(h % (2 * (uint64_t)r->k.sum_amp + 1)) -
		    r->k.sum_amp;
		if (((uint64_t)(uint32_t)g + res) % (uint64_t)r->stride)
			x = 0;
		break;
	case CB_OP_PROD:
		x = pow2[h & 7];
		return flip && !g ? -x : x;
	default:
		x = (int64_t)(h % (2 * (uint64_t)r->k.mm_amp + 1)) -
		    r->k.mm_amp;
		break;
	}
	return flip ? -x : x;
}

/* The reduction of all ranks' inputs at residue @res, as the type's bits. */
static uint64_t reduced(const struct red *r, uint32_t res, int flip)
{
	int64_t acc = input_at(r, 0, res, flip);
	uint64_t uacc = (uint64_t)acc;
	int neg = acc < 0, twos = acc == 2 || acc == -2;

	for (int g = 1; g < r->nin; g++) {
		int64_t x = input_at(r, g, res, flip);
		switch (r->op) {
		case CB_OP_SUM: /* integers wrap; float sums stay exact */
			uacc += (uint64_t)x;
			break;
		case CB_OP_PROD:
			uacc *= (uint64_t)x;
			neg ^= x < 0;
			twos += x == 2 || x == -2;
			break;
		case CB_OP_MIN:
			acc = x < acc ? x : acc;
			break;
		default:
			acc = x > acc ? x : acc;
			break;
		}
	}
	if (r->op == CB_OP_MIN || r->op == CB_OP_MAX)
		return encode(&r->k, acc);
	if (r->op == CB_OP_PROD && r->k.flt)
		return fp_bits(&r->k, neg, 1, twos);
	if (!r->k.flt)
		return uacc & width_mask(&r->k);
	return encode(&r->k, (int64_t)uacc);
}

/* Fill rank @g's inputs @base.. into @cnt elements of @buf, or poison
 * or check the @cnt results that reduce them. */
static uint64_t walk_reduced(const struct red *r, enum walk w, int g, void *buf,
                             size_t base, size_t cnt)
{
	size_t span = cnt < PERIOD ? cnt : PERIOD;
	uint64_t want[2][CHUNK], wrong = 0;

	/* Residues t0.. of the block at a time, then every element of the
	 * block with one of them. */
	for (size_t t0 = 0; t0 < span; t0 += CHUNK) {
		size_t tn = span - t0 < CHUNK ? span - t0 : CHUNK;
		for (size_t t = 0; t < tn; t++) {
			uint32_t res = (uint32_t)((base + t0 + t) % PERIOD);
			for (int f = 0; f < 2; f++) {
				if (w == FILL)
					want[f][t] = encode(
					        &r->k, input_at(r, g, res, f));
				else
					want[f][t] = reduced(r, res, f);
			}
		}
		for (size_t p = t0; p < cnt; p += PERIOD) {
			for (size_t t = 0; t < tn && p + t < cnt; t++) {
				size_t j = p + t;
				uint64_t x = want[flipped(base + j)][t];
				if (w == CHECK)
					wrong += get(buf, j, r->k.bytes) != x;
				else
					put(buf, j, r->k.bytes,
					    w == FILL ? x : ~x);
			}
		}
	}
	return wrong;
}

/* ---- the collectives ---- */

/* Poison or check this rank's receive buffer. */
static uint64_t walk_result(const struct cb_verify *v, enum walk w, void *buf)
{
	struct kind k = kind_of(v->dtype);
	struct red r = red_of(v);
	int n = v->n, me = v->me;
	uint64_t wrong = 0;

	switch (v->coll) {
	case CB_COLL_ALLREDUCE:
		return me < r.nin ? walk_reduced(&r, w, 0, buf, 0, v->count)
		                  : 0;
	case CB_COLL_REDUCE:
		return me == v->root && me < r.nin
		               ? walk_reduced(&r, w, 0, buf, 0, v->count)
		               : 0;
	case CB_COLL_REDUCE_SCATTER:
		return me < r.nin
		               ? walk_reduced(&r, w, 0, buf,
		                              (size_t)me * v->count, v->count)
		               : 0;
	case CB_COLL_ALLGATHER:
		for (int s = 0; s < n; s++)
			wrong += walk_data(&k, w, s, -1, buf,
			                   (size_t)s * v->count, v->count);
		return wrong;
	case CB_COLL_BROADCAST:
		return walk_data(&k, w, v->root, -1, buf, 0, v->count);
	case CB_COLL_ALLTOALL:
		for (int s = 0; s < n; s++)
			wrong += walk_data(&k, w, s, me, buf,
			                   (size_t)s * v->count, v->count);
		return wrong;
	case CB_COLL_SENDRECV:
		return walk_data(&k, w, (me - 1 + n) % n, -1, buf, 0, v->count);
	case CB_COLL_PINGPONG:
		return n >= 2 && (me == 0 || me == 1)
		               ? walk_data(&k, w, 1 - me, -1, buf, 0, v->count)
		               : 0;
	default: /* barrier */
		return 0;
	}
}

void cb_verify_fill(const struct cb_verify *v, void *sendbuf)
{
	struct kind k = kind_of(v->dtype);
	struct red r = red_of(v);
	size_t elems = cb_coll_send_elems(v->coll, v->count, v->n);

	if (cb_coll_reduces(v->coll)) {
		walk_reduced(&r, FILL, v->me, sendbuf, 0, elems);
	} else if (v->coll == CB_COLL_ALLTOALL) {
		for (int d = 0; d < v->n; d++)
			walk_data(&k, FILL, v->me, d, sendbuf,
			          (size_t)d * v->count, v->count);
	} else if (v->coll != CB_COLL_BARRIER) {
		walk_data(&k, FILL, v->me, -1, sendbuf, 0, v->count);
	}
}

void cb_verify_poison(const struct cb_verify *v, void *recvbuf)
{
	walk_result(v, POISON, recvbuf);
}

uint64_t cb_verify_check(const struct cb_verify *v, const void *recvbuf)
{
	/* CHECK only reads the buffer */
	return walk_result(v, CHECK, (void *)recvbuf);
}

/* ---- the allreduce-only interface, until cli/sweep.c moves over ---- */

void cb_fill(enum cb_dtype dt, enum cb_op op, int rank, void *buf, size_t count)
{
	struct cb_verify v = {
		.coll = CB_COLL_ALLREDUCE,
		.dtype = dt,
		.op = op,
		.n = rank + 1,
		.me = rank,
		.count = count,
	};

	cb_verify_fill(&v, buf);
}

uint64_t cb_check_allreduce(enum cb_dtype dt, enum cb_op op, int n,
                            const void *buf, size_t count)
{
	struct cb_verify v = {
		.coll = CB_COLL_ALLREDUCE,
		.dtype = dt,
		.op = op,
		.n = n,
		.me = 0,
		.count = count,
	};

	return cb_verify_check(&v, buf);
}

int64_t cb_input_value(enum cb_op op, int rank, size_t i)
{
	struct red r = { kind_of(CB_DT_FLOAT32), op, 1, 1 };

	return input_at(&r, rank, (uint32_t)(i % PERIOD), flipped(i));
}

/* ---- the asynchronous parameter server (coll/ps_async.c) ---- */

/* Parameters start at i mod 13; worker w's update is 1 + (i + 3w) mod 5:
 * small positive integers, so a copy's expected value is exact in every
 * type the algorithm takes (integers wrap alike; float32 holds the sums
 * of the check's sessions, at most 64 steps of up to 1024 workers). */
static uint64_t ps_init(size_t i)
{
	return i % 13;
}

static uint64_t ps_update(size_t i, int w)
{
	return 1 + (i + 3 * (size_t)w) % 5;
}

void cb_verify_ps_fill(void *ctx, void *buf, size_t off, size_t n, int who)
{
	struct kind k = kind_of(*(const enum cb_dtype *)ctx);

	for (size_t j = 0; j < n; j++) {
		size_t i = off + j;
		uint64_t v = who < 0 ? ps_init(i) : ps_update(i, who);
		put(buf, j, k.bytes, encode(&k, (int64_t)v));
	}
}

uint64_t cb_verify_ps_check(void *ctx, const void *buf, size_t off, size_t n,
                            const uint64_t *counts, int nworkers)
{
	struct kind k = kind_of(*(const enum cb_dtype *)ctx);
	uint64_t wrong = 0;

	for (size_t j = 0; j < n; j++) {
		size_t i = off + j;
		uint64_t v = ps_init(i);
		for (int w = 0; w < nworkers; w++)
			v += counts[w] * ps_update(i, w);
		if (k.flt && v >> (k.mbits + 1))
			return n; /* beyond the type's exact integers */
		if (get(buf, j, k.bytes) != encode(&k, (int64_t)v))
			wrong++;
	}
	return wrong;
}
