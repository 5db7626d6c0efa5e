/*
 * Internal to dags/: exact attention's parents, products and sums (MODEL.md
 * section 5), for the DAG operations table in dags/attention.c. Not part of
 * the public API.
 */
#ifndef PEBBLESIM_DAGS_EXACT_H
#define PEBBLESIM_DAGS_EXACT_H

#include "pebblesim/attention.h"

uint64_t ps_exact_parent_count(const struct ps_dag *dag, ps_node v);
ps_node ps_exact_parent(const struct ps_dag *dag, ps_node v, uint64_t k);
void ps_exact_product(const struct ps_dag *dag, ps_node p,
		      struct ps_product *out);
void ps_exact_sum(const struct ps_dag *dag, ps_node v, struct ps_sum *out);
ps_node ps_exact_output(const struct ps_dag *dag, uint64_t k);
/* Decoding (MODEL.md section 8): the roles and first rows of each kind. */
void ps_exact_decode_roles(struct ps_attention *att);

#endif
