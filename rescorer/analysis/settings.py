"""What the user chooses for the paper's tables and figures (`rescore top-targets | generate |
plot-embeddings | plot-phrases | plot-attention`): one settings record each (rescorer.records), every setting
declared once as a field; the command line makes its options from these fields. Where a command
writes (-o, --csv, --dpi, --force) is the command's own. Torch-free, like every record."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from rescorer.io.score_format import SCORE_FORMATS, score_column
from rescorer.records import (EXISTING_FILE, EXISTING_FILE_OR_STDIN, INT, POSITIVE_FLOAT, POSITIVE_INT, TEXTS, Kind,
                              check_record, choice, like, setting)
from rescorer.runtime.settings import RuntimeSettings
from rescorer.scoring.settings import MAX_BEAM

__all__ = ["PICKS", "MAX_SAMPLES", "TopTargetsSettings", "GenerateSettings", "MapSettings", "EmbeddingMapSettings",
           "PhraseMapSettings", "AttentionPlotSettings"]

PICKS = ("frequent", "rare", "random")  # how sources are picked from a table
# Samples are drawn in batches of a beam's rows, so they are bounded as the beam is (MAX_BEAM).
MAX_SAMPLES = 10000


@dataclass(frozen=True)
class TopTargetsSettings:
    """`rescore top-targets`, the paper's Table 2: which sources, and whose scores rank their
    targets."""

    column: Optional[int] = setting(
        None, Kind("text", parse=score_column), "Score column holding the RNN score in a rescored TABLE, counted "
        "from 1 (-1: the last); needed unless --model scores the targets.", option="--column", metavar="COLUMN",
        show_default=False)
    score_format: str = setting("prob", choice(*SCORE_FORMATS), "How --column stores the RNN score.",
                                option="--score-format")
    num_sources: int = setting(10, POSITIVE_INT, "How many source phrases to pick.", option="--num-sources")
    pick: str = setting("frequent", choice(*PICKS), "The most frequent sources (by c(source)), the rarest, or a "
                        "seeded random choice.", option="--pick")
    min_source_words: int = setting(1, POSITIVE_INT, "Pick only sources of at least this many words (the paper: 4).",
                                    option="--min-source-words")
    min_targets: int = setting(2, POSITIVE_INT, "Pick only sources with at least this many targets (one target "
                               "ranks first both ways).", option="--min-targets")
    sources_path: Optional[Path] = setting(None, EXISTING_FILE_OR_STDIN, "Show these sources, one per line ('-': "
                                           "stdin), instead of picking.", option="--sources", show_default=False)
    top: int = setting(3, POSITIVE_INT, "Targets per ranking.", option="-k --top")
    seed: int = setting(1, INT, "For --pick random and ties.", option="--seed")

    def __post_init__(self) -> None:
        check_record(self)


@dataclass(frozen=True)
class GenerateSettings:
    """`rescore generate`, the paper's Table 3: what the model proposes for each source."""

    sources: tuple = setting((), TEXTS, "A source phrase (repeatable).", option="--source", show_default=False)
    sources_path: Optional[Path] = setting(None, EXISTING_FILE_OR_STDIN, "Source phrases, one per line ('-': stdin).",
                                           option="--sources", show_default=False)
    beam: int = setting(5, Kind("int", minimum=0, maximum=MAX_BEAM), "Beam size K: the K best targets beam search "
                        "finds (0: no beam search).", option="--beam")
    samples: int = setting(50, Kind("int", minimum=0, maximum=MAX_SAMPLES), "Targets drawn per source (0: no "
                           "sampling); the paper drew 50.", option="--samples")
    temperature: float = setting(1.0, POSITIVE_FLOAT, "Sample from p^(1/T); log p is always the model's own.",
                                 option="--temperature")
    seed: int = setting(1, INT, "Samples depend only on (seed, source).", option="--seed")
    table_path: Optional[Path] = setting(None, EXISTING_FILE, "A phrase table: show each source's top targets by "
                                         "its p(f|e) too.", option="--table", show_default=False)
    top: int = setting(5, POSITIVE_INT, "Distinct samples and table targets shown per source.", option="-k --top")
    max_length: int = setting(20, POSITIVE_INT, "Target words at most; a hypothesis that long must end.",
                              option="--max-length")

    def __post_init__(self) -> None:
        check_record(self)


@dataclass(frozen=True)
class MapSettings:
    """A t-SNE map's own settings, shared by the maps of words and of phrases."""

    seed: int = setting(1, INT, "t-SNE's seed.", option="--seed")
    zooms: int = setting(3, Kind("int", minimum=0, maximum=6), "Zoomed views of the densest regions.",
                         option="--zooms")


@dataclass(frozen=True)
class EmbeddingMapSettings:
    """`rescore plot-embeddings`, the paper's Figure 4: whose words are mapped."""

    side: str = setting("source", choice("source", "target"), "Whose embeddings: the encoder's source words or the "
                        "decoder's target words.", option="--side")
    words: int = setting(500, Kind("int", minimum=5), "The most frequent words of the shortlist.", option="--words")
    seed: int = like(MapSettings, "seed")
    zooms: int = like(MapSettings, "zooms")
    device: str = like(RuntimeSettings, "device")

    def __post_init__(self) -> None:
        check_record(self)


@dataclass(frozen=True)
class PhraseMapSettings:
    """`rescore plot-phrases`, the paper's Figure 5: which source phrases are mapped."""

    phrases: int = setting(1000, Kind("int", minimum=5), "Source phrases to map (the paper: 5000).",
                           option="--phrases")
    min_words: int = setting(4, POSITIVE_INT, "Map only source phrases of at least this many words (the paper: 4).",
                             option="--min-words")
    pick: str = setting("random", choice(*PICKS), "Which sources of TABLE: a seeded random choice (the paper), the "
                        "most frequent or the rarest.", option="--pick")
    seed: int = like(MapSettings, "seed")
    zooms: int = like(MapSettings, "zooms")
    device: str = like(RuntimeSettings, "device")

    def __post_init__(self) -> None:
        check_record(self)


@dataclass(frozen=True)
class AttentionPlotSettings:
    """`rescore plot-attention`: the pairs whose attention is drawn, one panel each."""

    sources: tuple = setting((), TEXTS, "Source phrase (repeat for panels).", option="--source", required=True,
                             show_default=False)
    targets: tuple = setting((), TEXTS, "Target phrase, one per --source [default: the model's greedy "
                             "translation].", option="--target", show_default=False)
    device: str = like(RuntimeSettings, "device")

    def __post_init__(self) -> None:
        check_record(self)
