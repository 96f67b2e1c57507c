"""bf16 and int8 on a CPU without instructions for them: detected from cpuinfo, said in one line."""

from rescorer.runtime.cpu_features import cpu_features, slow_precision_warning

EPYC_AVX2 = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B12
flags\t\t: fpu sse2 avx avx2 fma bmi2

processor\t: 1
model name\t: AMD EPYC 7B12
flags\t\t: fpu sse2 avx avx2 fma bmi2
"""
XEON_AMX = """processor\t: 0
model name\t: Intel(R) Xeon(R) Platinum 8481C
flags\t\t: avx2 avx512f avx512_bf16 avx512_vnni amx_bf16 amx_int8 amx_tile
"""


def test_an_avx2_only_cpu_warns_for_bf16_and_int8_naming_what_it_found(tmp_path):
    (tmp_path / "cpuinfo").write_text(EPYC_AVX2)
    features = cpu_features(tmp_path / "cpuinfo")
    assert features.model == "AMD EPYC 7B12" and not features.has_bf16 and not features.has_int8
    bf16 = slow_precision_warning("bf16", "cpu", features)
    assert bf16.startswith("warning: --precision bf16 on AMD EPYC 7B12 (avx2): without "
                           "amx_bf16/avx512_bf16 it is emulated and slower than fp32")
    assert "without amx_int8/avx512_vnni/avx_vnni" in slow_precision_warning("int8", "cpu", features)
    assert slow_precision_warning("fp32", "cpu", features) is None


def test_a_cpu_with_matrix_units_or_a_gpu_does_not_warn(tmp_path):
    (tmp_path / "cpuinfo").write_text(XEON_AMX)
    features = cpu_features(tmp_path / "cpuinfo")
    assert features.has_bf16 and features.has_int8
    assert features.describe() == ("Intel(R) Xeon(R) Platinum 8481C (avx2 avx512f amx_bf16 avx512_bf16 "
                                   "amx_int8 avx512_vnni)")
    assert slow_precision_warning("bf16", "cpu", features) is None
    (tmp_path / "avx2").write_text(EPYC_AVX2)
    assert slow_precision_warning("bf16", "cuda", cpu_features(tmp_path / "avx2")) is None


def test_no_cpuinfo_means_no_claim(tmp_path):
    assert cpu_features(tmp_path / "absent") is None
    assert slow_precision_warning("bf16", "cpu", None) is None
