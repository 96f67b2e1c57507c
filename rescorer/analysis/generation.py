"""The paper's Table 3: target phrases the RNN proposes by itself for given source phrases.

Cho et al. (2014, §4.3) drew 50 samples per source and showed the five best by the RNN's
score; here beam search gives the K best targets it finds too, each with its log p, beside the
phrase table's own top targets when a table is given (also scored by the RNN). Samples of one
source depend only on (seed, source), not on which other sources are asked for.
"""

from __future__ import annotations

import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional, Sequence

import torch

from rescorer.analysis.settings import GenerateSettings
from rescorer.analysis.top_targets import SourceGroup
from rescorer.errors import RescorerError
from rescorer.models.model_files import ModelBundle
from rescorer.models.search import Hypothesis, beam_search, sample

__all__ = ["Proposal", "Generated", "generate", "generated_rows"]


@dataclass(frozen=True)
class Proposal:
    target: str
    log_p: float  # the RNN's log p(target | source)
    count: int = 1  # how many of the samples it was
    in_table: Optional[bool] = None  # a target of this source in the table (None: no table)


@dataclass
class Generated:
    source: str
    unknown_words: list[str]  # source words outside the shortlist, read as [UNK]
    beam: list[Proposal] = field(default_factory=list)
    samples: list[Proposal] = field(default_factory=list)  # distinct, by descending log p
    num_samples: int = 0
    table: list[Proposal] = field(default_factory=list)  # the table's top targets by p(f|e)
    table_log_p: dict = field(default_factory=dict)  # target -> the table's log p(f|e)
    forced_ends: int = 0  # hypotheses stopped by max_length


def _words(bundle: ModelBundle, hypothesis: Hypothesis) -> str:
    """The hypothesis as text: its words, or a subword model's pieces joined back to words."""
    return bundle.tgt_encoding.decode(hypothesis.tokens)


def sample_generator(seed: int, source: str, device: torch.device) -> torch.Generator:
    """The random stream of one source's samples: seeded by (seed, source)."""
    generator = torch.Generator(device=device)
    generator.manual_seed((seed * 1_000_003 + zlib.crc32(source.encode("utf-8", "surrogateescape")))
                          % (1 << 62))
    return generator


def generate(bundle: ModelBundle, sources: Sequence[str], settings: GenerateSettings,
             groups: Optional[dict[str, SourceGroup]] = None) -> list[Generated]:
    """Beam search (settings.beam > 0) and sampling (settings.samples > 0) for each source;
    `groups` (source -> its phrase-table targets, RNN-scored) adds the table's top targets."""
    beam_size, num_samples, max_length = settings.beam, settings.samples, settings.max_length
    model = bundle.model
    device = next(model.parameters()).device
    results = []
    for source in sources:
        words = source.split()
        if not words:
            raise RescorerError("an empty source phrase: give at least one word")
        src_ids = bundle.src_encoding.encode(source)
        unknown = [] if bundle.subwords is not None else [word for word in words if not bundle.src_vocab.is_known(word)]
        item = Generated(source, unknown)
        group = (groups or {}).get(source)
        known = None if groups is None else set(group.targets if group else ())
        if beam_size:
            found = beam_search(model, src_ids, beam_size, max_length)
            item.beam = [Proposal(_words(bundle, h), h.log_p, 1, _in(known, _words(bundle, h))) for h in found]
            item.forced_ends += sum(h.forced_end for h in found)
        if num_samples:
            drawn = sample(model, src_ids, num_samples, max_length, settings.temperature,
                           sample_generator(settings.seed, source, device))
            counts = Counter(_words(bundle, h) for h in drawn)
            best = {}
            for hypothesis in drawn:
                best.setdefault(_words(bundle, hypothesis), hypothesis.log_p)
            item.samples = sorted((Proposal(target, log_p, counts[target], _in(known, target))
                                   for target, log_p in best.items()), key=lambda p: -p.log_p)
            item.num_samples = len(drawn)
            item.forced_ends += sum(h.forced_end for h in drawn)
        if group is not None:
            order = group.ranked("table")[:settings.top]
            item.table = [Proposal(group.targets[i], group.rnn[i], 1, True) for i in order]
            item.table_log_p = {group.targets[i]: group.direct[i] for i in order}
        results.append(item)
    return results


def _in(known: Optional[set], target: str) -> Optional[bool]:
    return None if known is None else target in known


def _marked(proposal: Proposal, with_count: bool) -> str:
    mark = " *" if proposal.in_table else ""
    count = f"×{proposal.count}, " if with_count else ""
    return f"{proposal.target}{mark} ({count}{proposal.log_p:.2f})"


TABLE3_CSV_HEADERS = ("source", "method", "rank", "target", "rnn_log_p", "count", "table_log_p", "in_table")


def generated_rows(items: Sequence[Generated], beam_size: int, num_samples: int, top: int,
                   with_table: bool, csv: bool = False) -> tuple[tuple, list[list]]:
    """Headers and rows of Table 3: one row per source (Markdown) or per target (CSV)."""
    if csv:
        rows = []
        for item in items:
            for method, proposals in (("beam", item.beam), ("sample", item.samples[:top]),
                                      ("table", item.table)):
                for rank, p in enumerate(proposals, 1):
                    table_log_p = item.table_log_p.get(p.target)
                    rows.append([item.source, method, rank, p.target, f"{p.log_p:.8g}", p.count,
                                 "" if table_log_p is None else f"{table_log_p:.8g}",
                                 "" if p.in_table is None else ("yes" if p.in_table else "no")])
        return TABLE3_CSV_HEADERS, rows
    headers = ["source"]
    if beam_size:
        headers.append(f"beam search (K={beam_size})")
    if num_samples:
        headers.append(f"samples: top {top} of {num_samples}")
    if with_table:
        headers.append(f"phrase table: top {top} by p(f|e)")
    rows = []
    for item in items:
        source = item.source + (f" ([UNK]: {' '.join(item.unknown_words)})" if item.unknown_words else "")
        row = [source]
        if beam_size:
            row.append("; ".join(_marked(p, False) for p in item.beam))
        if num_samples:
            row.append("; ".join(_marked(p, True) for p in item.samples[:top]))
        if with_table:
            row.append("; ".join(f"{p.target} (table {item.table_log_p[p.target]:.2f}, RNN {p.log_p:.2f})"
                                 for p in item.table) or "(not in the table)")
        rows.append(row)
    return tuple(headers), rows
