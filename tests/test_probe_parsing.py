"""The pure parsing parts of probes, on sample texts (issue 25: the miscompile's recorded conditions)."""

from __future__ import annotations

from conformance.cases.program import matrix_features_from_cpuinfo, matrix_features_from_sysctl

ARM_CPUINFO = """processor\t: 0
BogoMIPS\t: 2000.00
Features\t: fp asimd evtstrm aes sve sve2 svebf16 sme sme2 smei16i64 bti
CPU implementer\t: 0x61
"""
X86_CPUINFO = """processor\t: 0
flags\t\t: fpu vme de smep smap avx512f amx_bf16 amx_tile amx_int8
"""
SYSCTL = """hw.optional.arm.FEAT_SME: 1
hw.optional.arm.FEAT_SME2: 1
hw.optional.arm.FEAT_SVE: 0
hw.optional.arm.FEAT_BF16: 1
"""


def test_arm_cpuinfo_gives_its_sme_and_sve_words():
    assert matrix_features_from_cpuinfo(ARM_CPUINFO) == ["sme", "sme2", "smei16i64", "sve", "sve2", "svebf16"]


def test_x86_smep_is_no_sme_but_amx_is_recorded():
    assert matrix_features_from_cpuinfo(X86_CPUINFO) == ["amx_bf16", "amx_int8", "amx_tile"]


def test_sysctl_keeps_the_sme_and_sve_features_that_are_set():
    assert matrix_features_from_sysctl(SYSCTL) == ["FEAT_SME", "FEAT_SME2"]
    assert matrix_features_from_sysctl("hw.optional.arm.FEAT_SME: 0\n") == []
