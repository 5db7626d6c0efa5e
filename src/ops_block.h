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

/*
 * Loops of blocks of query rows (colpass's phase 2): every operation of
 * the body on the rows I of its iteration (coordinate 0), I a range moving
 * by its length, and of kinds whose nodes lie in those rows: loads,
 * saves, deletes and computes of Q, U1, N and A, and macs into N, whose
 * other parents H[M, B] no operation of the loop changes. Iterations then
 * touch disjoint nodes besides H, and a row's moves depend only on its
 * own nodes, H and the count of red pebbles. When every row starts alike
 * (each flag that decides a verdict the same at each column in every
 * row, each sum's record of in-edges the same), every iteration does what
 * the first does, shifted: the same verdicts, and at each move the red
 * pebbles of the first plus (its index) x (the first's net change). So
 * the engine's sink applies the first iteration op by op (a violation
 * there is exact), and then, when the rest fits M, every other iteration
 * at once: each operation over the union of their rows, row by row the
 * same moves in the same order as the loop's.
 *
 * ps_block_rows_loop: is r such a loop, its rows alike (judged before the
 * first iteration)? ps_block_rows_rest: after the first iteration, applies
 * the others with the loop's peak; PS_BLOCK_APPLIED, or an error.
 */
bool ps_block_rows_loop(const struct ps_attention *att, const struct ps_engine *e,
			const struct ps_repeat *r);
int ps_block_rows_rest(const struct ps_attention *att, struct ps_engine *e,
		       const struct ps_repeat *r, uint64_t peak, struct ps_error *err);

#endif
