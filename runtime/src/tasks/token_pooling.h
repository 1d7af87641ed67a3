// SPDX-License-Identifier: Apache-2.0
// token_pooling.h: PyLate's hierarchical token pooling of a ColBERT document's token vectors
// (pylate.models.ColBERT.encode(pool_factor=...), pylate/utils hierarchical_pooling): the first
// `protected_rows` rows are kept; the others (m rows) are clustered by Ward linkage on the rows of
// their cosine-distance matrix 1 - E E^T (scipy.cluster.hierarchy.linkage of that square matrix,
// which scipy reads as m observations), cut into max(m / pool_factor, 1) clusters as
// fcluster(criterion="maxclust") cuts, and each cluster replaced by the mean of its rows (not
// re-normalized); the cluster means come first, in fcluster's label order, then the protected rows.
#pragma once

#include <cstddef>
#include <vector>

namespace edgebert::tasks {

// One merge of a Ward linkage as scipy's linkage matrix row: clusters `left` < `right` (ids < m
// are rows; m + k is the cluster row k formed), their distance, rows sorted by distance.
struct LinkageRow {
  size_t left = 0, right = 0;
  double distance = 0.0;
};

// Ward linkage (scipy's nearest-neighbour chain, Lance-Williams update) of the m rows of the
// condensed Euclidean distance matrix `distances` (m (m - 1) / 2 entries, scipy's order; consumed).
std::vector<LinkageRow> ward_linkage(std::vector<double>& distances, size_t m);

// fcluster(Z, t, criterion="maxclust") labels (1-based) of the m rows of linkage z.
std::vector<size_t> maxclust_labels(const std::vector<LinkageRow>& z, size_t m, size_t t);

// Pools vectors [rows, dim] into out (room for `rows` rows); returns the pooled row count.
// pool_factor >= 1 (1: a copy). May throw std::bad_alloc (O(m^2) doubles of scratch).
size_t pool_token_vectors(const float* vectors, size_t rows, size_t dim, size_t pool_factor, size_t protected_rows,
                          float* out);

}  // namespace edgebert::tasks
