"""Decoder settings (`--decoder-flags "-search-algorithm 1 -s 400"`) given to both tuning and
test decoding, checked before a run instead of failing in it.

mert-moses.pl passes its --decoder-flags to every decoder run and also writes them into the
tuned moses.ini (create_config splits them on single spaces into `[name]` sections, dying on a
value with no -name before it). It refuses flags that replace the model files. The ablation
itself sets the config, threads, input and n-best list, so those are refused too.
"""

from __future__ import annotations

import re
import shlex

from ..errors import MosesConfigError

__all__ = ["parse_decoder_flags"]

# Flags the caller sets itself, and those mert-moses.pl refuses (see its source), with the
# option to use instead.
_REFUSED = {
    "f": "the ini is given by the command", "config": "the ini is given by the command",
    "threads": "use --threads", "th": "use --threads",
    "i": "the input is given by the command", "input-file": "the input is given by the command",
    "n-best-list": "n-best lists are set by mert-moses.pl (--nbest)",
    "weight-overwrite": "weights come from the ini", "weight-file": "weights come from the ini",
    "t": "mert-moses.pl refuses it: put the table in the ini",
    "ttable-file": "mert-moses.pl refuses it: put the table in the ini",
    "distortion-file": "mert-moses.pl refuses it: put the table in the ini",
    "generation-file": "mert-moses.pl refuses it: put the table in the ini",
    "lmodel-file": "mert-moses.pl refuses it: put the model in the ini",
    "global-lexical-file": "mert-moses.pl refuses it: put the model in the ini",
}
_FLAG = re.compile(r"^--?([^\d.].*)$")  # mert-moses.pl's own test: a dash, then not a digit


def parse_decoder_flags(text: str, origin: str = "--decoder-flags") -> tuple[str, ...]:
    """`"-search-algorithm 1 -s 400"` -> ("-search-algorithm", "1", "-s", "400"), or one line
    saying which flag cannot be used and why."""
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise MosesConfigError(f"{origin}: cannot split {text!r} into words ({exc})") from None
    if tokens and not _FLAG.match(tokens[0]):
        raise MosesConfigError(f"{origin}: expected a -flag first, found {tokens[0]!r} in {text!r}")
    for token in tokens:
        if any(c.isspace() for c in token) or any(c in token for c in "'\"\\;|&$`<>"):
            raise MosesConfigError(
                f"{origin}: {token!r} cannot be passed through mert-moses.pl, which splits the "
                "flags on spaces and hands them to a shell; expected plain words")
        match = _FLAG.match(token)
        if match and match.group(1) in _REFUSED:
            raise MosesConfigError(f"{origin}: {token} cannot be used here: {_REFUSED[match.group(1)]}")
    return tuple(tokens)
