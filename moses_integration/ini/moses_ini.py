"""Read and edit moses.ini without disturbing it: every line is kept byte for byte (comments,
blank lines, trailing spaces) and an edit rewrites only the values it must, so that a diff
of the file before and after shows exactly the lines that changed."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from rescorer.counts import counted

from ..errors import MosesConfigError

__all__ = [
    "PHRASE_TABLE_KINDS",
    "EDITABLE_PHRASE_TABLE_KINDS",
    "Feature",
    "MosesIni",
    "format_weight",
]

# Feature functions that are phrase tables. Only the first two can take new score columns
# here: a text table (Memory) is read as is, a Compact one is re-binarized from text.
EDITABLE_PHRASE_TABLE_KINDS = ("PhraseDictionaryMemory", "PhraseDictionaryCompact")
PHRASE_TABLE_KINDS = EDITABLE_PHRASE_TABLE_KINDS + (
    "PhraseDictionaryOnDisk",
    "PhraseDictionaryMultiModel",
    "PhraseDictionaryMultiModelCounts",
    "PhraseDictionaryBitextSampling",
    "PhraseDictionaryScope3",
    "PhraseDictionaryFuzzyMatch",
    "PhraseDictionaryTransliteration",
    "PhraseDictionaryDynamicCacheBased",
    "PhraseDictionaryALSuffixArray",
    "ProbingPT",
)
# Sections of the pre-2013 format, which named tables by position instead of features.
OLD_FORMAT_SECTIONS = ("ttable-file", "lmodel-file", "weight-t", "weight-l")

_SECTION = re.compile(r"^\s*\[([^\]]+)\]\s*$")
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def format_weight(value: float) -> str:
    """Shortest decimal form of a weight (0.2, not 0.200000), like hand-written inis."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


@dataclass(frozen=True)
class Feature:
    """One line of the [feature] section: `Kind key=value ...`; `line_no` is 0-based."""

    line_no: int
    kind: str
    args: dict
    name: str

    @property
    def is_phrase_table(self) -> bool:
        return self.kind in PHRASE_TABLE_KINDS or self.kind.startswith("PhraseDictionary")

    def int_arg(self, key: str, origin: str) -> int:
        """An integer argument, or a MosesConfigError naming the line."""
        value = self.args.get(key)
        if value is None or not value.isdigit():
            raise MosesConfigError(
                f"{origin}:{self.line_no + 1}: expected {key}=<integer> on the {self.name} line, "
                f"found {key}={value!r}" if value is not None else
                f"{origin}:{self.line_no + 1}: expected {key}=<integer> on the {self.name} line, found none")
        return int(value)


class MosesIni:
    """A moses.ini as a list of raw lines (line endings kept), with lookups and in-place edits."""

    def __init__(self, text: str, origin: str = "moses.ini") -> None:
        self.lines = text.splitlines(keepends=True)
        self.origin = origin
        self._check_format()

    @classmethod
    def read(cls, path: Path) -> "MosesIni":
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise MosesConfigError(f"{path}: cannot read moses.ini ({exc.strerror})") from exc
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MosesConfigError(f"{path}: moses.ini is not UTF-8 text (byte {exc.start})") from exc
        return cls(text, origin=str(path))

    def text(self) -> str:
        return "".join(self.lines)

    def write(self, path: Path, force: bool = True) -> None:
        """Write atomically (a temporary beside it, renamed): a failed write keeps the old file."""
        from rescorer.io.atomic_output import AtomicOutput

        path.parent.mkdir(parents=True, exist_ok=True)
        with AtomicOutput(path, force=force) as out:
            out.write(self.text().encode("utf-8"))

    def check_weights(self, name: str) -> None:
        """Refuse what Moses would refuse to load: a [weight] line for `name` with a value that
        is not a finite number, or another count of weights than the feature's num-features."""
        i = self.weight_line(name)
        values = self.weights(name)
        bad = [v for v in values if not math.isfinite(v)]
        if bad:
            raise MosesConfigError(f"{self.origin}:{i + 1}: expected finite weights after '{name}=', "
                                   f"found {bad[0]}")
        feature = self.feature(name)
        if "num-features" in feature.args:
            expected = feature.int_arg("num-features", self.origin)
            if len(values) != expected:
                raise MosesConfigError(
                    f"{self.origin}:{i + 1}: expected {counted(expected, 'weight')} for {name} (num-features="
                    f"{expected} on line {feature.line_no + 1}), found {len(values)}")

    # ---- structure -------------------------------------------------------------------
    def section_of_lines(self) -> list[Optional[str]]:
        """For each line, the section it belongs to (None before the first header)."""
        current: Optional[str] = None
        sections = []
        for line in self.lines:
            match = _SECTION.match(line)
            if match:
                current = match.group(1).strip()
            sections.append(current)
        return sections

    def section_lines(self, section: str) -> list[int]:
        """Line numbers of the content lines (not blank, not comment) of one section."""
        return [
            i for i, (line, sec) in enumerate(zip(self.lines, self.section_of_lines()))
            if sec == section and line.strip() and not line.lstrip().startswith("#")
            and not _SECTION.match(line)
        ]

    def _check_format(self) -> None:
        sections = self.section_of_lines()
        for i, line in enumerate(self.lines):
            match = _SECTION.match(line)
            if match and match.group(1).strip() in OLD_FORMAT_SECTIONS:
                raise MosesConfigError(
                    f"{self.origin}:{i + 1}: [{match.group(1).strip()}] is the pre-2013 moses.ini "
                    "format; expected a [feature] section: convert the file by loading and saving "
                    "it with a current Moses (moses -f old.ini -show-weights lists the new names) "
                    "or re-run train-model.perl step 9")
        if "feature" not in sections:
            raise MosesConfigError(f"{self.origin}: expected a [feature] section, found none")

    def features(self, problems: Optional[list] = None) -> list[Feature]:
        """The [feature] lines, named as Moses names them (name=, else Kind + running index).

        A token that is not key=value raises MosesConfigError, or, when a `problems` list is
        given (preflight), is reported there once and skipped so that every other check runs."""
        counts: dict[str, int] = {}
        result = []
        for i in self.section_lines("feature"):
            tokens = self.lines[i].split()
            kind, args = tokens[0], {}
            for token in tokens[1:]:
                key, sep, value = token.partition("=")
                if not sep or not key:
                    message = f"{self.origin}:{i + 1}: expected key=value after {kind}, found {token!r}"
                    if problems is None:
                        raise MosesConfigError(message)
                    if message not in problems:
                        problems.append(message)
                    continue
                args[key] = value
            index = counts.get(kind, 0)
            counts[kind] = index + 1
            result.append(Feature(i, kind, args, args.get("name", f"{kind}{index}")))
        return result

    def feature(self, name: str) -> Feature:
        for feature in self.features():
            if feature.name == name:
                return feature
        names = ", ".join(f.name for f in self.features())
        raise MosesConfigError(f"{self.origin}: no feature named {name!r}; found: {names}")

    def phrase_table(self, name: Optional[str] = None) -> Feature:
        """The phrase table to extend: the one named, or the only one there is."""
        tables = [f for f in self.features() if f.is_phrase_table]
        if name is not None:
            tables = [f for f in tables if f.name == name]
        if len(tables) != 1:
            found = ", ".join(f"{f.name} ({f.kind}, line {f.line_no + 1})" for f in tables) or "none"
            wanted = f"a phrase table named {name!r}" if name else "exactly one phrase table"
            raise MosesConfigError(
                f"{self.origin}: expected {wanted} in [feature], found {found}"
                + ("; choose one with --feature" if len(tables) > 1 else ""))
        table = tables[0]
        if table.kind not in EDITABLE_PHRASE_TABLE_KINDS:
            raise MosesConfigError(
                f"{self.origin}:{table.line_no + 1}: cannot add score columns to a {table.kind} "
                f"table; expected one of {', '.join(EDITABLE_PHRASE_TABLE_KINDS)}: convert it to a "
                "text table (PhraseDictionaryMemory) or a compact one (processPhraseTableMin) first")
        return table

    def weight_line(self, name: str) -> int:
        """Line number of `name= w1 w2 ...` in [weight]."""
        for i in self.section_lines("weight"):
            if self.lines[i].split("=", 1)[0].strip() == name:
                return i
        raise MosesConfigError(
            f"{self.origin}: expected a line '{name}= ...' in [weight], found none")

    def weights(self, name: str) -> list[float]:
        i = self.weight_line(name)
        values = self.lines[i].split("=", 1)[1].split()
        try:
            return [float(v) for v in values]
        except ValueError as exc:
            raise MosesConfigError(
                f"{self.origin}:{i + 1}: expected numbers after '{name}=', found {values}") from exc

    def all_weights(self) -> dict[str, list[float]]:
        """Every dense weight line of [weight], in file order."""
        result = {}
        for i in self.section_lines("weight"):
            name = self.lines[i].split("=", 1)[0].strip()
            result[name] = self.weights(name)
        return result

    # ---- edits (each touches only the values it names) ----------------------------------
    def set_feature_arg(self, feature: Feature, key: str, value: str) -> None:
        """Replace the value of `key=` on a feature line, keeping all other bytes."""
        line = self.lines[feature.line_no]
        pattern = re.compile(r"(?<=\s)" + re.escape(key) + r"=\S*")
        new_line, count = pattern.subn(lambda _m: f"{key}={value}", line, count=1)
        if count != 1:
            raise MosesConfigError(
                f"{self.origin}:{feature.line_no + 1}: expected {key}= on the {feature.name} line, found none")
        self.lines[feature.line_no] = new_line

    def set_weights(self, name: str, values: Sequence[float]) -> None:
        """Replace the values of a [weight] line, keeping its name, spacing and line ending."""
        i = self.weight_line(name)
        line = self.lines[i]
        head, _, rest = line.partition("=")
        body = rest.rstrip("\r\n")
        ending = rest[len(body):]
        trailing = body[len(body.rstrip()):]
        lead = body[: len(body) - len(body.lstrip())] or " "
        self.lines[i] = f"{head}={lead}{' '.join(format_weight(v) for v in values)}{trailing}{ending}"

    def append_weights(self, name: str, values: Sequence[float]) -> None:
        """Append values to a [weight] line right after its last value."""
        i = self.weight_line(name)
        line = self.lines[i]
        body = line.rstrip("\r\n")
        stripped = body.rstrip()
        addition = "".join(f" {format_weight(v)}" for v in values)
        self.lines[i] = stripped + addition + body[len(stripped):] + line[len(body):]

    def add_score_columns(self, table: Feature, new_path: str, num_new: int,
                          initial_weights: Sequence[float]) -> None:
        """Point `table` at a table with `num_new` more scores and give them initial weights."""
        if len(initial_weights) != num_new:
            raise MosesConfigError(
                f"expected {num_new} initial weight(s) for the new column(s), found {len(initial_weights)}")
        num_features = table.int_arg("num-features", self.origin)
        self.set_feature_arg(table, "path", new_path)
        self.set_feature_arg(table, "num-features", str(num_features + num_new))
        self.append_weights(table.name, initial_weights)

    def set_score_columns(self, table: Feature, new_path: str, weights: Sequence[float]) -> None:
        """Point `table` at `new_path` with exactly `len(weights)` scores (ablation systems)."""
        self.set_feature_arg(table, "path", new_path)
        self.set_feature_arg(table, "num-features", str(len(weights)))
        self.set_weights(table.name, weights)

    def _line_ending(self) -> str:
        """The file's own line ending (its first line's), for lines added."""
        first = next((line for line in self.lines if line.endswith(("\n", "\r"))), "\n")
        return first[len(first.rstrip("\r\n")):]

    def add_feature_line(self, kind: str, args: dict, weights: Sequence[float]) -> Feature:
        """Append `Kind key=value ...` to [feature] and `name= weights` to [weight], each after
        its section's last line; `args` must hold the name=, which no feature may have yet."""
        name = args["name"]
        if any(feature.name == name for feature in self.features()):
            raise MosesConfigError(f"{self.origin}: a feature is already named {name!r}; choose another name")
        weight_lines = self.section_lines("weight")
        if not weight_lines:
            raise MosesConfigError(f"{self.origin}: expected a [weight] section with weights, found none")
        feature_line = " ".join([kind, *(f"{key}={value}" for key, value in args.items())])
        weight_line = f"{name}= {' '.join(format_weight(v) for v in weights)}"
        feature_lines = self.section_lines("feature") or [self.section_of_lines().index("feature")]
        for after, text in sorted([(feature_lines[-1], feature_line), (weight_lines[-1], weight_line)],
                                  reverse=True):
            last = self.lines[after]
            ending = last[len(last.rstrip("\r\n")):] or self._line_ending()
            if not last.endswith(("\n", "\r")):
                self.lines[after] = last + ending
            self.lines.insert(after + 1, text + ending)
        return self.feature(name)

    def make_paths_absolute(self, base_dir: Path) -> None:
        """Resolve every relative `path=` against base_dir: mert-moses.pl runs the decoder
        inside its working directory, where the system's relative paths would not resolve."""
        for feature in self.features():
            path = feature.args.get("path")
            if path and not Path(path).is_absolute():
                self.set_feature_arg(feature, "path", str((base_dir / path).resolve()))
