"""What the CPU computes fast. bf16 and int8 pay off only with instructions for them (AMX, or
AVX-512 BF16 and VNNI, or AVX-VNNI); without them PyTorch emulates, and both ran slower than
fp32 (an AVX2-only AMD EPYC: a bf16 matmul rate of 2 GFLOP/s against 70 for fp32, bf16 scoring
at 0.18x fp32, int8 at 0.08x). A run asked for either on such a CPU says so before it starts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

__all__ = ["CpuFeatures", "cpu_features", "slow_precision_warning", "BF16_FLAGS", "INT8_FLAGS"]

BF16_FLAGS = ("amx_bf16", "avx512_bf16")
INT8_FLAGS = ("amx_int8", "avx512_vnni", "avx_vnni")
_SHOWN = ("avx2", "avx512f", *BF16_FLAGS, *INT8_FLAGS)


@dataclass(frozen=True)
class CpuFeatures:
    model: str
    flags: frozenset

    @property
    def has_bf16(self) -> bool:
        return bool(self.flags & set(BF16_FLAGS))

    @property
    def has_int8(self) -> bool:
        return bool(self.flags & set(INT8_FLAGS))

    def describe(self) -> str:
        """The model name and the flags that decide bf16 and int8 speed."""
        shown = [flag for flag in _SHOWN if flag in self.flags]
        return f"{self.model} ({' '.join(shown) or 'none of ' + ' '.join(_SHOWN)})"


def cpu_features(cpuinfo: Path = Path("/proc/cpuinfo")) -> Optional[CpuFeatures]:
    """The first CPU's model and flags from Linux's cpuinfo; None where there is none to read."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return None
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            if fields:
                break  # the first processor's block is enough
            continue
        fields.setdefault(key.strip(), value.strip())
    if "flags" not in fields:
        return None
    return CpuFeatures(fields.get("model name", "unknown CPU"), frozenset(fields["flags"].split()))


def slow_precision_warning(precision: str, device_type: str,
                           features: Optional[CpuFeatures]) -> Optional[str]:
    """One line when `precision` would be emulated on this CPU, naming what was detected."""
    if device_type != "cpu" or features is None:
        return None
    if precision == "bf16" and not features.has_bf16:
        needs = "/".join(BF16_FLAGS)
    elif precision == "int8" and not features.has_int8:
        needs = "/".join(INT8_FLAGS)
    else:
        return None
    return (f"warning: --precision {precision} on {features.describe()}: without {needs} it is "
            f"emulated and slower than fp32 (0.18x for bf16, 0.08x for int8 on an AVX2-only CPU); "
            f"fp32 is the fast choice here")
