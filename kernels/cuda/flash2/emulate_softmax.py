#!/usr/bin/env python3
"""Row-level emulation of flash2_fwd_kernel's online softmax (log2 domain,
-inf-safe), the epilogue merge of key-splitting warps (WN) and the split-KV
merge kernel, against a direct softmax: random masks with fully masked rows,
random visited-tile lists, 1..11 splits (many empty). Checks no NaN, lse = -inf
exactly where no key is visible (with O = 0), and values.
Run: python3 kernels/cuda/flash2/emulate_softmax.py
"""
import numpy as np

np.seterr(invalid='ignore')  # np.where evaluates both branches; the kernel branches
rng = np.random.default_rng(1)
NEG = -np.inf
def ex2(x):
    with np.errstate(over='ignore', invalid='ignore'):
        return np.exp2(x)

def kernel_rows(s_all, vis, V, tiles, BN, WN, splits, scale):
    # s_all: raw scores [R, Nkv]; vis: bool [R, Nkv]; tiles: visited tile list
    R, Nkv = s_all.shape; d = V.shape[1]; sl2 = scale * np.log2(np.e)
    parts = []
    for sp in range(splits):
        lo, hi = len(tiles) * sp // splits, len(tiles) * (sp + 1) // splits
        m = np.full((WN, R), NEG); l = np.zeros((WN, R)); o = np.zeros((WN, R, d))
        for kt in tiles[lo:hi]:
            for wn in range(WN):
                ks = np.arange(kt * BN + wn * BN // WN, kt * BN + (wn + 1) * BN // WN)
                valid = ks < Nkv
                s = np.full((R, len(ks)), NEG)
                kv = ks[valid]
                s[:, valid] = np.where(vis[:, kv], s_all[:, kv], NEG)
                mx = s.max(axis=1)
                m_new = np.maximum(m[wn], mx)
                m_sc = np.where(m_new == NEG, 0.0, m_new) * sl2
                alpha = ex2(m[wn] * sl2 - m_sc)
                p = ex2(s * sl2 - m_sc[:, None])
                l[wn] = l[wn] * alpha + p.sum(axis=1)
                Vt = np.zeros((len(ks), d)); Vt[valid] = V[kv]
                o[wn] = o[wn] * alpha[:, None] + p @ Vt
                m[wn] = m_new
        M = m.max(axis=0)
        L = np.zeros(R)
        for w in range(WN):
            L += np.where(m[w] != NEG, l[w] * ex2(np.where(m[w] != NEG, m[w] - M, 0) * sl2), 0)
        out = np.zeros((R, d))
        for w in range(WN):
            f = np.where(m[w] == NEG, 0.0, ex2(np.where(m[w] == NEG, 0, m[w] - M) * sl2) / np.where(L > 0, L, 1))
            out += o[w] * f[:, None]
        lse = np.where(L > 0, M * scale + np.log(np.where(L > 0, L, 1)), NEG)
        parts.append((out, lse))
    if splits == 1: return parts[0]
    lses = np.array([p[1] for p in parts]); M = lses.max(axis=0)
    w = np.where(M == NEG, 0, np.exp(lses - np.where(M == NEG, 0, M)))
    L = w.sum(axis=0)
    O = sum(w[s][:, None] * parts[s][0] for s in range(splits)) / np.where(L > 0, L, 1)[:, None]
    return np.where(L[:, None] > 0, O, 0), np.where(L > 0, M + np.log(np.where(L > 0, L, 1)), NEG)

def ref(s_all, vis, V, scale):
    s = np.where(vis, s_all * scale, NEG)
    M = s.max(axis=1); Ms = np.where(M == NEG, 0, M)
    e = np.exp(s - Ms[:, None]); L = e.sum(axis=1)
    O = np.where(L[:, None] > 0, e @ V / np.where(L > 0, L, 1)[:, None], 0)
    return O, np.where(L > 0, Ms + np.log(np.where(L > 0, L, 1)), NEG)

worst = 0
for trial in range(300):
    R = rng.integers(1, 20); Nkv = int(rng.integers(1, 400)); d = 8; BN = 64
    WN = int(rng.choice([1, 4])); splits = int(rng.integers(1, 12))
    s_all = rng.standard_normal((R, Nkv)) * 3; V = rng.standard_normal((Nkv, d))
    vis = rng.random((R, Nkv)) < rng.choice([0.0, 0.05, 0.5, 1.0])
    vis[rng.random(R) < 0.3] = False  # fully masked rows
    nt = (Nkv + BN - 1) // BN
    tiles = sorted(rng.choice(nt, size=int(rng.integers(0, nt + 1)), replace=False).tolist())
    # keep only pairs inside visited tiles visible (the kernel's contract)
    inside = np.zeros(Nkv, bool)
    for t in tiles: inside[t * BN:(t + 1) * BN] = True
    vis &= inside[None, :]
    O, lse = kernel_rows(s_all, vis, V, tiles, BN, WN, splits, 0.3)
    Or, lr = ref(s_all, vis, V, 0.3)
    assert not np.isnan(O).any() and not np.isnan(lse).any(), trial
    assert np.array_equal(np.isinf(lse), np.isinf(lr)), trial
    assert (O[np.isinf(lr)] == 0).all()
    fin = ~np.isinf(lr)
    worst = max(worst, np.abs(O - Or).max(), np.abs(lse[fin] - lr[fin]).max() if fin.any() else 0)
print("ok, worst abs err", worst)
