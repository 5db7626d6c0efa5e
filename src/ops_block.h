/*
 * The block path of the set-operation expander (src/ops_block.c): whole
 * operations judged at once, applied only when every move would succeed.
 */
#ifndef PEBBLESIM_OPS_BLOCK_H
#define PEBBLESIM_OPS_BLOCK_H

#include "pebblesim/attention.h"
#include "pebblesim/engine.h"
#include "pebblesim/ops.h"

enum {
	PS_BLOCK_DECLINED = 0, /* nothing changed: take the element path */
	PS_BLOCK_APPLIED = 1,  /* the whole operation is done, and valid */
};                             /* or PS_ENOMEM (< 0): state not allocated */

/* A mac into N or H over a block (op checked by ps_op_check). */
int ps_block_mac(const struct ps_attention *att, struct ps_engine *e,
		 const struct ps_op *op);

/* A load, save or delete over a block of a kind that holds pebbles. */
int ps_block_move(const struct ps_attention *att, struct ps_engine *e,
		  const struct ps_op *op);

/* A compute of U1, U2 or A over a block. */
int ps_block_compute(const struct ps_attention *att, struct ps_engine *e,
		     const struct ps_op *op);

/* A loop of operations (struct ps_repeat) judged as one unit: applied
 * when it has a form the block path knows and every move of it would
 * succeed; else declined, nothing changed. */
int ps_block_repeat(const struct ps_attention *att, struct ps_engine *e,
		    const struct ps_repeat *r);

#endif
