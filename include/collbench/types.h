/* SPDX-License-Identifier: MIT */
/*
 * collbench/types.h - datatypes and reduction operators, shared by the
 * algorithms, the driver and (later) GPU kernels.
 */
#ifndef COLLBENCH_TYPES_H
#define COLLBENCH_TYPES_H

#include <stddef.h>

/*
 * Datatypes: id, name, alias, bytes.  The aliases are nccl-tests' names
 * where they differ ("float", "double", "half"; "char" is NCCL's ncclChar,
 * a signed byte).  float16 is IEEE binary16, bfloat16 the upper half of a
 * binary32; both are reduced in float and rounded once (coll/reduce.h).
 * New types go at the end: the order is the enum's, which the CLI's
 * "all" list follows.
 */
#define CB_DTYPE_MAP(X)                                                        \
	X(FLOAT32, "float32", "float", 4)                                      \
	X(FLOAT64, "float64", "double", 8)                                     \
	X(INT32, "int32", "int32", 4)                                          \
	X(INT64, "int64", "int64", 8)                                          \
	X(INT8, "int8", "char", 1)                                             \
	X(UINT8, "uint8", "uint8", 1)                                          \
	X(FLOAT16, "float16", "half", 2)                                       \
	X(BFLOAT16, "bfloat16", "bf16", 2)

enum cb_dtype {
#define CB_DTYPE_ENUM(id, name, alias, size) CB_DT_##id,
	CB_DTYPE_MAP(CB_DTYPE_ENUM)
#undef CB_DTYPE_ENUM
	        CB_DT_COUNT
};

#define CB_OP_MAP(X)                                                           \
	X(SUM, "sum")                                                          \
	X(PROD, "prod")                                                        \
	X(MIN, "min")                                                          \
	X(MAX, "max")

enum cb_op {
#define CB_OP_ENUM(id, name) CB_OP_##id,
	CB_OP_MAP(CB_OP_ENUM)
#undef CB_OP_ENUM
	        CB_OP_COUNT
};

/* Their names and sizes as functions: core/types.h (the core's, which a
 * module cannot link). */

#endif
