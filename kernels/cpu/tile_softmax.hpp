// The online-softmax step of the flash kernels on a transposed score tile:
// one fused, vectorised pass over the tile per key tile (column max, then
// exp, sum and the rescale factors), vectorised across query rows.
//
// The flash kernels hold S^T (keys x query rows, query row i in column i),
// because S^T = K Q^T is a product with both operands contiguous in memory
// (tile_gemm.hpp). A query row's statistics (running max m, running sum l)
// are then lanes of a vector: no horizontal reductions, 16 rows per
// instruction. The rescale factor of the accumulator goes to the P V product
// as its per-row scale (c_update::c_row_scale) instead of a pass over O.
#pragma once

#include <cstdint>

namespace attnbench::cpu {

// For each query row i < rows of st[cols x ld] (entry (j, i) at st[j * ld + i]):
// m_new = max(m_i, max_j s_ji); s_ji <- exp(s_ji - m_new) (0 for -inf scores);
// alpha_i = exp(m_i - m_new) (0 while m_i = -inf); l_i <- alpha_i l_i + sum_j s_ji;
// m_i <- m_new. Rows that have seen no visible key keep m = -inf, l = 0.
// Returns the exps it executed: rows * (cols + 1) (every score, one alpha per row).
std::int64_t online_softmax_columns(float* st, std::int64_t cols, std::int64_t ld, std::int64_t rows, float* m,
                                    float* l, float* alpha);

// The same with a block-local maximum (flash1): m_blk = max_j s_ji;
// s_ji <- exp(s_ji - m_blk); returns m_blk in m_blk[i], the sum in l_blk[i]
// (m_blk = -inf and l_blk = 0 for a row with no visible key in the tile).
// Returns the exps it executed: rows * cols.
std::int64_t block_softmax_columns(float* st, std::int64_t cols, std::int64_t ld, std::int64_t rows, float* m_blk,
                                   float* l_blk);

}  // namespace attnbench::cpu
