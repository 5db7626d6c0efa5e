/*
 * Internal to colpass.c and its tests: not part of the library's API.
 *
 * colpass's planning asks, again and again, which features a range of
 * positions of its monomial order reads. It answers from an index of
 * where each feature occurs (a binary search a feature) or, for a short
 * range, by reading the range's monomials. The two give the same plan;
 * the tests force one or the other to compare them.
 */
#ifndef PEBBLESIM_COLPASS_H
#define PEBBLESIM_COLPASS_H

enum ps_colpass_features {
	PS_COLPASS_FEATURES_AUTO,  /* the cheaper of the two for each range */
	PS_COLPASS_FEATURES_SCAN,  /* read every monomial of the range */
	PS_COLPASS_FEATURES_INDEX, /* search the index of occurrences */
};

/* How colpass's planning finds a range's features from now on. */
void ps_colpass_set_features(enum ps_colpass_features how);

#endif
