"""Is an n-best list in the language and tokenization of the models that score it? A model
scores any text, so a list of the wrong language (English hypotheses for a French model) or
tokenization would be scored without a word of warning, and its features would be noise.

A word model (a CSLM, a word-level sentence model) has most of such a list's words in its
shortlist: the bible test set's French, 97.6% of a 10,000-word CSLM's and 98.6% of a 15,000-word
sentence model's (90.2% of a 2,000-word one's); its English, 20.6% and 22.0% (18.0%). A subword
model's byte fallback reads every string, so it is judged by how finely it cuts the words
instead: text of its language is cut at about the rate of its training text (by a French BPE or
unigram model of 1,000 to 16,000 pieces, the French test set at 0.98 to 1.01 times it, a Moses
100-best list of the dev set at 0.95 to 1.01), text of another into much shorter pieces (the
English test set: 1.60 to 1.92 times). The first lines of a list are judged, as soon as they
hold JUDGED_WORDS words; fewer say too little to refuse on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from rescorer.data.subwords import not_utf8

from ..errors import NbestFormatError
from ..scorer import RnnScorer

__all__ = ["Judge", "TextChecks", "LEAST_KNOWN_SHARE", "MOST_PIECES_RATIO", "JUDGED_WORDS", "vocabulary_problem",
           "pieces_problem", "vocabulary_judge", "sentence_model_judge", "sentence_model_checks", "check_language",
           "check_utf8"]

# the hypotheses -> what is wrong with them for one model (None: nothing)
Judge = Callable[[Sequence[str]], Optional[str]]

LEAST_KNOWN_SHARE = 0.5
MOST_PIECES_RATIO = 1.3  # between the French's at most 1.01 and the English's at least 1.60 (geometric mean 1.27)
JUDGED_WORDS = 100


def vocabulary_problem(share: float, model: object) -> Optional[str]:
    """A word model's verdict: too few of the hypotheses' words (`share`) in its vocabulary."""
    if share >= LEAST_KNOWN_SHARE:
        return None
    return (f"only {share:.0%} of the hypotheses' words are in the vocabulary of {model}: is the list in that "
            f"model's language and tokenization? (a list that is has most of its words in it)")


def pieces_problem(found: float, trained: Optional[float], model: object) -> Optional[str]:
    """A subword model's verdict: the hypotheses' words cut into far more pieces each (`found`)
    than its training text's (`trained`; None, from a file that does not say: no verdict)."""
    if trained is None or found <= MOST_PIECES_RATIO * trained:
        return None
    return (f"the hypotheses' words take {found:.2f} subword pieces each in {model}, {found / trained:.2f} times "
            f"the {trained:.2f} of its training text: is the list in that model's language and tokenization? "
            f"(a list that is takes about as many)")


def vocabulary_judge(known_share: Callable[[Sequence[str]], float], model: object) -> Judge:
    """A word model's judge (a CSLM's), from the share of the hypotheses' words it knows."""
    return lambda hypotheses: vocabulary_problem(known_share(hypotheses), model)


def sentence_model_judge(scorer: RnnScorer, model_path: Path) -> Judge:
    """A sentence model's judge: by its vocabulary, or a subword model's by its pieces per word."""
    def judge(hypotheses: Sequence[str]) -> Optional[str]:
        pieces = scorer.pieces_per_word(model_path, hypotheses)
        if pieces is None:
            return vocabulary_problem(scorer.known_share(model_path, hypotheses), model_path)
        return pieces_problem(*pieces, model_path)
    return judge


@dataclass(frozen=True)
class TextChecks:
    """What a model asks of the text it scores: a list in its language and tokenization (`judge`,
    on the list's first hypotheses), and for a subword model text that is UTF-8 (`utf8_only`:
    sentencepiece would read a byte that is not as U+FFFD, silently)."""

    judge: Optional[Judge] = None
    utf8_only: bool = False
    model: object = None  # its file, for the messages


def sentence_model_checks(scorer: RnnScorer, model_path: Path) -> TextChecks:
    return TextChecks(sentence_model_judge(scorer, model_path), scorer.reads_utf8_only(model_path), model_path)


def check_utf8(text: str, where: str, checks: Sequence[TextChecks]) -> None:
    """Refuse, naming `where` (file:line), text a subword model among `checks` cannot segment."""
    model = next((check.model for check in checks if check.utf8_only), None)
    if model is None:
        return
    problem = not_utf8(text)
    if problem is not None:
        raise NbestFormatError(f"{where}: {problem}: the subword model {model} reads UTF-8 text")


def check_language(hypotheses: Sequence[str], judges: Sequence[Optional[Judge]], nbest_path: Path) -> None:
    """Refuse, in one line, a list whose first lines (`hypotheses`) a model does not read as its
    language and tokenization; a list of fewer than JUDGED_WORDS words passes unjudged."""
    if sum(len(hypothesis.split()) for hypothesis in hypotheses) < JUDGED_WORDS:
        return
    for judge in judges:
        problem = judge(hypotheses) if judge is not None else None
        if problem is not None:
            raise NbestFormatError(f"{nbest_path}: lines 1-{len(hypotheses)}: {problem}")
