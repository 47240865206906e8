"""scripts/kernel_resources.py check-hopper's rule (static.sass_hopper) on
synthetic SASS: a flash3-like kernel passes, and each defect it must catch --
no HGMMA (no QGMMA ...E4M3.E4M3 in an e4m3 kernel), no UTMALDG, no setmaxnreg, spills, wgmma serialised by ptxas, a launch or setmaxnreg budget over
the 64K register file -- fails it (the negative controls of the rule; the
ctest static.sass_hopper_control runs it on real SASS without HGMMA)."""
from __future__ import annotations

import kernel_resources as kr

GOOD = [
    "        /*0090*/                   USETMAXREG.DEALLOC.CTAPOOL 0x18 ;",
    "        /*00a0*/                   UTMALDG.4D [UR8], [UR4] ;",
    "        /*0100*/                   USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xf0 ;",
    "        /*0200*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT ;",
]
ENTRY = {"registers": 168, "spill_store_bytes": 0, "spill_load_bytes": 0}


def problems(sass, report="", **entry):
    return kr.hopper_problems({**ENTRY, **entry}, sass, threads=384, consumer_wgs=2, ptxas_report=report)


def test_flash3_like_kernel_passes():
    assert problems(GOOD) == []


def test_each_missing_instruction_fails():
    for op in ("HGMMA", "UTMALDG", "USETMAXREG"):
        bad = problems([line for line in GOOD if op not in line])
        assert any(op in b for b in bad), (op, bad)


def test_spills_fail():
    assert any("spills" in b for b in problems(GOOD, spill_store_bytes=8))


def test_launch_registers_over_the_file_fail():
    assert any("registers x 384" in b for b in problems(GOOD, registers=176))


def test_setmaxnreg_budget_over_the_file_fails():
    over = [line.replace("0xf0", "0xf8") for line in GOOD]  # 128 x 24 + 256 x 248 = 66560
    assert any("66560" in b for b in problems(over))


def test_setmaxnreg_budget_over_the_launch_pool_fails():
    # 160 x 384 = 61440 allocated, 128 x 24 + 256 x 240 = 64512 asked for: the consumers' inc never returns
    assert any("wait forever" in b for b in problems(GOOD, registers=160))


def test_serialised_wgmma_fails():
    report = ("ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async instructions are serialized "
              "due to program dependence on compiler-inserted WG.AR in divergent path")
    assert any("C7520" in b for b in problems(GOOD, report))


def test_no_sass_fails():
    assert problems(None) == ["no SASS"]


FP8 = [line.replace("HGMMA.64x128x16.F32.BF16", "QGMMA.64x128x32.F32.E4M3.E4M3") for line in GOOD]
FP8_KERNEL = "void attnbench::cuda::flash3_fwd_kernel<attnbench::cuda::flash3_traits<128, 128, 3, attnbench::cuda::f3::e4m3> >"


def test_fp8_kernel_with_e4m3_qgmma_passes():
    assert problems(FP8, kernel=FP8_KERNEL) == []


def test_fp8_kernel_without_the_e4m3_form_fails():
    # 16-bit wgmma (HGMMA) or another 8-bit form in an e4m3 kernel is not the fp8 path
    assert any("QGMMA E4M3" in b for b in problems(GOOD, kernel=FP8_KERNEL))
    e5m2 = [line.replace("E4M3.E4M3", "E5M2.E5M2") for line in FP8]
    assert any("QGMMA E4M3" in b for b in problems(e5m2, kernel=FP8_KERNEL))


def test_16bit_kernel_with_only_qgmma_fails():
    assert any("no HGMMA" in b for b in problems(FP8))
