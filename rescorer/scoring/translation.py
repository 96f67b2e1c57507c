"""Translate a file of tokenized sentences with a model's own beam search, so that a sentence
model's BLEU can be reported beside Moses'.

Sentences are decoded in batches of similar length (rescorer.models.batch_search) and written
back in input order, one output line per input line: an empty input line gives an empty output
line (counted). A word model reads words outside its shortlist as [UNK], and may produce [UNK];
a subword model reads its own pieces of each line and writes its output joined back to the
corpus's tokenization, with no [UNK] (rescorer.data.text_encoding). A translation has at most
a + b * source tokens (a subword model's pieces, as it was measured and as the search counts):
the model file's measured cap (rescorer.data.length_caps) unless --max-length-ratio is given.
The output (and the n-best list, in Moses' format) appears only once complete.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import torch

from rescorer.data.length_caps import BEFORE_MEASURED, cap_of
from rescorer.data.subwords import not_utf8
from rescorer.errors import RescorerError
from rescorer.io.atomic_output import AtomicOutput, committed_together
from rescorer.io.compression import decompressing_reader
from rescorer.models.batch_search import Translation, batch_beam_search
from rescorer.models.model_files import ModelBundle
from rescorer.runtime.progress import Progress, no_progress
from rescorer.scoring.settings import TranslateSettings

__all__ = ["SearchSettings", "TranslateSettings", "TranslationSummary", "translate_file", "max_output_length",
           "with_length_cap"]


SearchSettings = TranslateSettings  # the record (rescorer.scoring.settings), by the name the search knows


@dataclass
class TranslationSummary:
    sentences: int = 0
    empty: int = 0  # empty input lines, written as empty output lines
    forced_ends: int = 0  # 1-best outputs stopped by the length bound
    unknown_source_words: int = 0  # source tokens read as [UNK]
    source_words: int = 0
    source_pieces: int = 0  # a subword model's source pieces (0 for a word model)


def max_output_length(source_tokens: int, settings: SearchSettings) -> int:
    """The bound, in target tokens (a subword model's pieces), for a source of `source_tokens`
    tokens (its pieces), of settings whose length cap is resolved (`with_length_cap`)."""
    return cap_of(source_tokens, settings.length_slack, settings.length_ratio)


def with_length_cap(bundle: ModelBundle, settings: SearchSettings) -> SearchSettings:
    """The settings with the length cap filled in: --max-length-ratio R gives R * source + 10
    (or the slack given); without it, the model file's measured a + b * source (2 * source + 10
    for files written before it was measured)."""
    if settings.length_ratio is not None:
        slack = settings.length_slack if settings.length_slack is not None else BEFORE_MEASURED[0]
        return dataclasses.replace(settings, length_slack=slack)
    measured = bundle.training.get("length_cap")
    slack, ratio = (measured["slack"], measured["ratio"]) if measured else BEFORE_MEASURED
    return dataclasses.replace(settings, length_ratio=float(ratio), length_slack=int(slack))


def read_sentences(path: Path) -> list[str]:
    """The input's lines (plain or compressed; '-': stdin), without their line ends."""
    try:
        file = os.fdopen(os.dup(sys.stdin.fileno()), "rb") if str(path) == "-" else open(path, "rb")
    except OSError as exc:
        raise RescorerError(f"{path}: cannot open the input ({exc.strerror})") from None
    with file:
        reader = decompressing_reader(file, str(path))
        try:
            return [line.rstrip(b"\r\n").decode("utf-8", "surrogateescape") for line in (reader or file)]
        finally:
            if reader is not None:
                reader.close()


def translate_file(bundle: ModelBundle, input_path: Path, output_path: Path, settings: SearchSettings,
                   device: torch.device = torch.device("cpu"), nbest_path: Optional[Path] = None,
                   force: bool = False, progress: Progress = no_progress) -> TranslationSummary:
    """Write the 1-best translation of every input line to `output_path`, and with `nbest_path`
    the `settings.nbest_size` best as a Moses n-best list (`id ||| words ||| RNN= log p ||| score`)."""
    settings = with_length_cap(bundle, settings)
    sentences = read_sentences(input_path)
    summary = TranslationSummary(sentences=len(sentences))
    source = bundle.src_encoding
    if source.subwords is not None:
        check_segmentable(sentences, input_path)
    units = [source.units(line) for line in sentences]
    encoded = [source.vocab.encode(line_units) for line_units in units]
    for line, line_units in zip(sentences, units):
        summary.source_words += len(line.split())
        summary.unknown_source_words += source.vocab.count_unknown(line_units)
        summary.source_pieces += len(line_units) if source.subwords is not None else 0
    order = sorted((i for i, ids in enumerate(encoded) if ids), key=lambda i: len(encoded[i]))
    summary.empty = len(sentences) - len(order)
    found: dict[int, list[Translation]] = {}
    model = bundle.model.to(device).eval()
    for start in range(0, len(order), settings.batch_size):
        batch = order[start:start + settings.batch_size]
        sources = [encoded[i] for i in batch]
        lengths = [max_output_length(len(ids), settings) for ids in sources]
        for i, translations in zip(batch, batch_beam_search(model, sources, settings.beam, lengths,
                                                            settings.alpha, settings.nbest_size,
                                                            settings.min_length)):
            found[i] = translations
        progress(len(batch))
    target = bundle.tgt_encoding
    output = AtomicOutput(output_path, force=force, input_path=input_path)
    nbest = AtomicOutput(nbest_path, force=force, input_path=input_path) if nbest_path else None
    with committed_together(output, nbest):
        for i in range(len(sentences)):
            translations = found.get(i, [])
            text = [target.decode(tr.hypothesis.tokens) for tr in translations]
            output.write_line((text[0] if text else "").encode("utf-8", "surrogateescape"))
            if translations and translations[0].hypothesis.forced_end:
                summary.forced_ends += 1
            if nbest is not None:
                for line, tr in zip(text, translations):
                    nbest.write_line(f"{i} ||| {line} ||| RNN= {tr.hypothesis.log_p:.6g} ||| "
                                     f"{tr.score:.6g}".encode("utf-8", "surrogateescape"))
    return summary


def check_segmentable(sentences: list[str], input_path: Path) -> None:
    """Refuse, naming the line, input a subword model cannot segment (bytes that are not UTF-8)."""
    for line_no, line in enumerate(sentences, start=1):
        problem = not_utf8(line)
        if problem is not None:
            raise RescorerError(f"{input_path}:{line_no}: {problem}: a subword model reads UTF-8 text")
