"""Where a job runs, one record for every command that runs a model (train, score, translate)."""

from __future__ import annotations

from dataclasses import dataclass

from rescorer.records import MAY_CHANGE, NOT_RECORDED, POSITIVE_FLOAT, check_record, choice, setting

__all__ = ["DEVICES", "PRECISIONS", "RuntimeSettings"]

DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("auto", "fp32", "bf16", "int8")  # int8: scoring on the CPU (rescorer.models.quantization)


@dataclass(frozen=True)
class RuntimeSettings:
    device: str = setting("auto", choice(*DEVICES), "Where the model runs.", option="--device",
                          resume=NOT_RECORDED)
    precision: str = setting(
        "auto", choice(*PRECISIONS),
        "auto: when a phrase table or n-best pairs are scored, bf16 on CUDA or on a CPU with "
        "amx_bf16/avx512_bf16 if a check of each model on the first 2000 pairs keeps its scores near fp32's, "
        "else fp32; in training, the CSLM and `translate`, bf16 autocast on CUDA, fp32 on the CPU. int8 (on "
        "the CPU, needs torchao): int8 weights and activations when a model scores (`run` trains in fp32, "
        "`train` refuses it).", option="--precision",
        resume=NOT_RECORDED)
    rank_timeout: float = setting(3600, POSITIVE_FLOAT,
                                  "Under torchrun: seconds a rank waits for the others before the job fails.",
                                  option="--rank-timeout", resume=MAY_CHANGE, signature=False)

    def __post_init__(self) -> None:
        check_record(self)
