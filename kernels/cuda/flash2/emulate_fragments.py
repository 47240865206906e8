#!/usr/bin/env python3
"""Warp-level emulation of flash2_fwd_kernel's fragment and address math.

ldmatrix (.x4, .trans) and mma.sync m16n8k16 are modelled from the PTX ISA's
fragment tables; the shared-memory offsets (swz), ldmatrix row addresses and
the C-to-A repack of P are the kernel's expressions, transcribed. It checks
S = Q K^T and O = P V per warp for several tile shapes (incl. two m16 tiles per
warp and 4 warps splitting the keys). Written because the development machine
has no GPU; run: python3 kernels/cuda/flash2/emulate_fragments.py (~1 min).
"""
import numpy as np
rng = np.random.default_rng(0)

def run(D, BM, BN, WM, WN):
    LD = D + 8
    MT = BM // (16 * WM); WKEYS = BN // WN; NT = WKEYS // 8; DT = D // 8; KS = D // 16; PS = WKEYS // 16
    Q = rng.standard_normal((BM, D)); K = rng.standard_normal((BN, D)); V = rng.standard_normal((BN, D))
    def to_smem(X):
        s = np.zeros(X.shape[0] * LD)
        for r in range(X.shape[0]):
            for c in range(D // 8):
                off = r * LD + c * 8  # swz
                s[off:off + 8] = X[r, c * 8:c * 8 + 8]
        return s
    sQ, sK, sV = to_smem(Q), to_smem(K), to_smem(V)
    def swz(row, chunk): return row * LD + chunk * 8
    def ldsm(smem, addrs, trans=False):
        # addrs[lane] -> returns regs[lane][i] = (lo, hi)
        out = [[None] * 4 for _ in range(32)]
        for i in range(4):
            M = np.array([smem[addrs[8 * i + r]: addrs[8 * i + r] + 8] for r in range(8)])
            for lane in range(32):
                g, t = lane >> 2, lane & 3
                out[lane][i] = (M[2 * t][g], M[2 * t + 1][g]) if trans else (M[g][2 * t], M[g][2 * t + 1])
        return out
    def mma(C, A, b0, b1):
        # C[lane][4], A[lane][4] pairs, b0/b1[lane] pairs
        Am = np.zeros((16, 16)); Bm = np.zeros((16, 8)); Cm = np.zeros((16, 8))
        for lane in range(32):
            g, t = lane >> 2, lane & 3
            Am[g][2*t:2*t+2] = A[lane][0]; Am[g+8][2*t:2*t+2] = A[lane][1]
            Am[g][2*t+8:2*t+10] = A[lane][2]; Am[g+8][2*t+8:2*t+10] = A[lane][3]
            Bm[2*t][g], Bm[2*t+1][g] = b0[lane]; Bm[2*t+8][g], Bm[2*t+9][g] = b1[lane]
            Cm[g][2*t], Cm[g][2*t+1], Cm[g+8][2*t], Cm[g+8][2*t+1] = C[lane]
        Cm = Cm + Am @ Bm
        for lane in range(32):
            g, t = lane >> 2, lane & 3
            C[lane] = [Cm[g][2*t], Cm[g][2*t+1], Cm[g+8][2*t], Cm[g+8][2*t+1]]
    maxerr = 0
    for warp in range(WM * WN):
        wm, wn = warp % WM, warp // WM
        rb = lambda mt: (wm * MT + mt) * 16
        s = [[[[0.0] * 4 for _ in range(32)] for _ in range(NT)] for _ in range(MT)]
        for ks in range(KS):
            a = [ldsm(sQ, [swz(rb(mt) + (l & 15), 2 * ks + (l >> 4)) for l in range(32)]) for mt in range(MT)]
            for np_ in range(NT // 2):
                bk = ldsm(sK, [swz(wn * WKEYS + np_ * 16 + (l & 7) + ((l >> 4) << 3), 2 * ks + ((l >> 3) & 1)) for l in range(32)])
                for mt in range(MT):
                    mma(s[mt][2*np_], a[mt], [bk[l][0] for l in range(32)], [bk[l][1] for l in range(32)])
                    mma(s[mt][2*np_+1], a[mt], [bk[l][2] for l in range(32)], [bk[l][3] for l in range(32)])
        # check S
        for mt in range(MT):
            for nt in range(NT):
                for lane in range(32):
                    g, t = lane >> 2, lane & 3
                    for e in range(4):
                        r = rb(mt) + g + 8 * (e >> 1); j = wn * WKEYS + nt * 8 + 2 * t + (e & 1)
                        maxerr = max(maxerr, abs(s[mt][nt][lane][e] - Q[r] @ K[j]))
        # P = S (no softmax, layout only); O = P V for this warp's keys
        o = [[[[0.0] * 4 for _ in range(32)] for _ in range(DT)] for _ in range(MT)]
        for ps in range(PS):
            a = [[[(s[mt][2*ps][l][0], s[mt][2*ps][l][1]), (s[mt][2*ps][l][2], s[mt][2*ps][l][3]),
                   (s[mt][2*ps+1][l][0], s[mt][2*ps+1][l][1]), (s[mt][2*ps+1][l][2], s[mt][2*ps+1][l][3])] for l in range(32)] for mt in range(MT)]
            for dp in range(DT // 2):
                bv = ldsm(sV, [swz(wn * WKEYS + ps * 16 + (l & 7) + (((l >> 3) & 1) << 3), 2 * dp + (l >> 4)) for l in range(32)], trans=True)
                for mt in range(MT):
                    mma(o[mt][2*dp], a[mt], [bv[l][0] for l in range(32)], [bv[l][1] for l in range(32)])
                    mma(o[mt][2*dp+1], a[mt], [bv[l][2] for l in range(32)], [bv[l][3] for l in range(32)])
        S = Q @ K.T
        keys = slice(wn * WKEYS, (wn + 1) * WKEYS)
        Oref = S[:, keys] @ V[keys]
        for mt in range(MT):
            for dt in range(DT):
                for lane in range(32):
                    g, t = lane >> 2, lane & 3
                    for e in range(4):
                        r = rb(mt) + g + 8 * (e >> 1); c = dt * 8 + 2 * t + (e & 1)
                        maxerr = max(maxerr, abs(o[mt][dt][lane][e] - Oref[r][c]))
    print(D, BM, BN, WM, WN, "max err", maxerr)

run(64, 64, 64, 4, 1)
run(64, 16, 64, 1, 4)
run(128, 32, 32, 2, 1)
run(64, 64, 64, 2, 1)   # MT = 2 path (Q re-read from smem)
