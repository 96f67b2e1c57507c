"""Decode a test set with a tuned moses.ini, score it with sacrebleu (BLEU, chrF) and
compare systems with sacrebleu's paired significance tests, baseline first. Every score takes
one or more references (streams of lines, one per human translation).

Scores on tokenized text use sacrebleu's `tokenize="none"`, which reproduces
multi-bleu.perl (38.27 on the fixture's test output); with `detokenize_lang` hypotheses and
references are detokenized with sacremoses first and scored with the standard 13a."""

from __future__ import annotations

import functools
import json
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional, Sequence

from rescorer.counts import counted
from rescorer.io.atomic_output import atomic_paths, write_atomically

from ..child_process import process_group
from ..errors import MosesRunError, PreflightError
from ..ini.moses_install import MosesInstall
from ..line_files import open_binary_read, read_lines

__all__ = ["EvalResult", "decode", "score", "sentence_bleu", "bleu_of_files", "compare", "detokenize",
           "write_result", "read_result", "read_references"]


@dataclass
class EvalResult:
    """Scores of one system's output; saved as JSON next to the output. In an ablation it also
    records the tuning run behind it (None in results written before these fields existed)."""

    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str
    num_lines: int
    hyp_path: str
    dev_bleu: Optional[float] = None
    start: Optional[str] = None  # where tuning started: "ini", "cold" or "warm" (see ablation)
    iterations: Optional[int] = None  # MERT iterations run
    stopped_by: Optional[str] = None  # "convergence", "max-iterations" or "unknown"
    dev_bleu_curve: Optional[list] = None  # dev BLEU of each iteration's 1-best output
    references: Optional[int] = None  # how many references BLEU and chrF were scored against
    new_weights: Optional[dict] = None  # the tuned weight of each new phrase-table column, by name


def decode(moses: MosesInstall, ini_path: Path, src_path: Path, hyp_path: Path,
           threads: int, base_dir: Path, log_path: Optional[Path] = None,
           decoder_flags: Sequence[str] = ()) -> Path:
    """`moses -f ini -threads N [flags] < src > hyp`, run in base_dir so relative paths resolve."""
    argv = [str(moses.binary("moses")), "-f", str(ini_path.resolve()), "-threads", str(threads),
            *decoder_flags]
    hyp_path.parent.mkdir(parents=True, exist_ok=True)
    log_path = log_path or hyp_path.with_name(hyp_path.name + ".log")
    # a hypothesis file exists only once decoding is complete
    with atomic_paths(hyp_path) as (partial,), open_binary_read(src_path) as src, \
            open(partial, "wb") as out, open(log_path, "wb") as log, \
            process_group(argv, cwd=base_dir, stdin=subprocess.PIPE, stdout=out, stderr=log) as process:
        assert process.stdin is not None  # Popen with stdin=PIPE always sets it
        try:
            for block in iter(lambda: src.read(1 << 16), b""):
                process.stdin.write(block)
        except BrokenPipeError:
            pass  # the decoder died; its exit status below says so
        finally:
            process.stdin.close()
        code = process.wait()
        if code != 0:
            raise MosesRunError(f"moses exited with status {code} decoding {src_path}; see {log_path}")
    return hyp_path


def detokenize(lines: Sequence[str], lang: str) -> list[str]:
    """Undo Moses tokenization (sacremoses), e.g. before scoring with a standard tokenizer."""
    from sacremoses import MosesDetokenizer

    detok = MosesDetokenizer(lang=lang)
    return [detok.detokenize(line.split()) for line in lines]


def _bleu(detokenize_lang: Optional[str], references: Optional[Sequence[Sequence[str]]] = None):
    """BLEU as multi-bleu.perl on tokenized text, or 13a on detokenized text; with
    `references` (streams), their statistics are computed once for every corpus_score."""
    from sacrebleu.metrics import BLEU

    refs = None if references is None else [list(stream) for stream in references]
    # force: the text is Moses-tokenized on purpose; silence sacrebleu's warning about it.
    if detokenize_lang:
        return BLEU(tokenize="13a", force=False, references=refs)
    return BLEU(tokenize="none", force=True, references=refs)


@functools.lru_cache(maxsize=1)
def _sentence_bleu_metric():
    from sacrebleu.metrics import BLEU

    return BLEU(tokenize="none", effective_order=True)


def sentence_bleu(hypothesis: str, references: Sequence[str]) -> float:
    """BLEU of one tokenized hypothesis against its references, as the n-best diagnostics rank
    hypotheses: no retokenizing, and effective order, so a short sentence without a 4-gram
    match still scores above 0."""
    return _sentence_bleu_metric().sentence_score(hypothesis, list(references)).score


def _check_lengths(hyps: Sequence[str], refs: Sequence[Sequence[str]], what: str) -> None:
    for stream in refs:
        if len(hyps) != len(stream):
            raise PreflightError([f"{what}: {counted(len(hyps), 'hypothesis', 'hypotheses')} but "
                                  f"{counted(len(stream), 'reference')}; "
                                  "expected one hypothesis per reference line"])


def read_references(paths: Sequence[Path]) -> list[list[str]]:
    """One stream of lines per reference file (gzip allowed)."""
    return [read_lines(path) for path in paths]


def _detokenized(refs: Sequence[Sequence[str]], detokenize_lang: Optional[str]) -> list:
    return [detokenize(stream, detokenize_lang) if detokenize_lang else list(stream) for stream in refs]


def score(hyps: Sequence[str], refs: Sequence[Sequence[str]], hyp_path: str = "",
          detokenize_lang: Optional[str] = None) -> EvalResult:
    """Corpus BLEU and chrF of hyps against one or more reference streams."""
    from sacrebleu.metrics import CHRF

    _check_lengths(hyps, refs, hyp_path or "hypotheses")
    refs = _detokenized(refs, detokenize_lang)
    if detokenize_lang:
        hyps = detokenize(hyps, detokenize_lang)
    bleu = _bleu(detokenize_lang)
    chrf = CHRF()
    bleu_score = bleu.corpus_score(list(hyps), refs)
    chrf_score = chrf.corpus_score(list(hyps), refs)
    return EvalResult(round(bleu_score.score, 4), round(chrf_score.score, 4),
                      str(bleu.get_signature()), str(chrf.get_signature()), len(hyps), hyp_path,
                      references=len(refs))


def bleu_of_files(hyp_paths: Sequence[Path], ref_paths: Sequence[Path],
                  detokenize_lang: Optional[str] = None) -> list[float]:
    """Corpus BLEU of several outputs against the reference files, which are read and counted
    once (the MERT curve scores every iteration's output)."""
    refs = _detokenized(read_references(ref_paths), detokenize_lang)
    bleu = _bleu(detokenize_lang, refs)
    scores = []
    for path in hyp_paths:
        hyps = read_lines(path)
        _check_lengths(hyps, refs, str(path))
        if detokenize_lang:
            hyps = detokenize(hyps, detokenize_lang)
        scores.append(round(bleu.corpus_score(hyps, None).score, 4))
    return scores


def compare(systems: Sequence[tuple[str, Sequence[str]]], refs: Sequence[Sequence[str]],
            test_type: str = "ar", num_samples: int = 0,
            detokenize_lang: Optional[str] = None) -> dict[str, dict[str, Optional[float]]]:
    """p-values ({"bleu": p, "chrf": p}, None for the baseline) of each system against the
    first (the baseline), from sacrebleu's PairedTest:
    `ar` = approximate randomization (10,000 trials), `bs` = paired bootstrap (1,000); `refs`,
    one stream per reference."""
    from sacrebleu.metrics import CHRF
    from sacrebleu.significance import PairedTest

    if test_type not in ("ar", "bs"):
        raise ValueError(f"test type must be 'ar' or 'bs', found {test_type!r}")
    for name, hyps in systems:
        _check_lengths(hyps, refs, name)
    if detokenize_lang:
        systems = [(name, detokenize(hyps, detokenize_lang)) for name, hyps in systems]
    refs = _detokenized(refs, detokenize_lang)
    metrics = {"BLEU": _bleu(detokenize_lang), "chrF": CHRF()}
    test = PairedTest([(name, list(hyps)) for name, hyps in systems], metrics, refs,
                      test_type=test_type, n_samples=num_samples)
    _, results = test()
    names = results.pop("System")
    keys = {metric: "chrf" if metric.startswith("chrF") else metric.lower() for metric in results}
    p_values = {name: {keys[metric]: results[metric][i].p_value for metric in results}
                for i, name in enumerate(names)}
    # sacrebleu's test counts only differences larger than the observed one, so a system whose
    # output is the baseline's gets 1 / (trials + 1) instead of 1: no difference is no evidence
    for name, hyps in systems[1:]:
        if list(hyps) == list(systems[0][1]):
            p_values[name] = {key: 1.0 for key in p_values[name]}
    return p_values


def write_result(result: EvalResult, path: Path) -> None:
    """Write the result JSON last, whole: its presence marks finished work."""
    write_atomically(path, (json.dumps(asdict(result), indent=2) + "\n").encode())


def read_result(path: Path) -> EvalResult:
    return EvalResult(**json.loads(path.read_text()))


def evaluate_file(hyp_path: Path, ref_paths: Sequence[Path], detokenize_lang: Optional[str] = None) -> EvalResult:
    """Score a hypothesis file against reference files (any may be gzipped)."""
    return score(read_lines(hyp_path), read_references(ref_paths), str(hyp_path), detokenize_lang)
