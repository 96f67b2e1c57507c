"""The CSLM in NPLM's text format, the model file of Moses' `NeuralLM` feature (Vaswani et al. 2013).

Laid out as NPLM's own writer does (`model::write` in moses-smt/nplm src/model.cpp): a
`\\config` block, `\\input_vocab` and `\\output_vocab` (one word a line), then
`\\input_embeddings`, `\\hidden_weights 1`, `\\hidden_biases 1`, `\\hidden_weights 2`,
`\\hidden_biases 2`, `\\output_weights`, `\\output_biases`, each followed by an empty line, and
`\\end`. A matrix is one row a line, its numbers tab-separated, printed as C++ streams print a
float by default: 6 significant digits (`%.6g`); a bias vector is one number a line.

How NPLM's names map onto the CSLM's (`rescorer.models.ngram_lm`):

- `ngram_size` is the order n: n-1 context words and the predicted one;
- `num_hidden` is the first hidden layer's width, `output_embedding_dimension` the second's
  (NPLM has two hidden layers unless num_hidden is 0, which the CSLM never is);
- the context embeddings are concatenated oldest word first, as `NgramLM.forward` does, and
  both layers apply the same activation: `rectifier`, the CSLM's ReLU;
- the special words: [PAD] is `<null>`, [UNK] `<unk>`, [EOS] `</s>` and BOS `<s>`, which pads the
  left context of a sentence's first words in NPLM as in the CSLM.

NPLM's scores are unnormalized: its `neuralLM`, and so Moses, returns the output layer's raw
score of the word unless `set_normalization(true)` is called, which Moses' NeuralLMWrapper
never does. NPLM's trainer's `--normalization 1` learns one log-normalizer per context during
training, but none is stored in the file. A CSLM exported for decoding must therefore be
self-normalized (log Z near 0) for Moses' scores to be log probabilities.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np
import torch

from rescorer.data.vocabulary import EOS, PAD, UNK
from rescorer.errors import ModelFileError
from rescorer.io.atomic_output import AtomicOutput
from rescorer.models.ngram_lm import BOS, BOS_ID, NgramLM, NgramLmConfig

__all__ = ["NPLM_NAMES", "NplmFile", "SECTIONS", "SIGNIFICANT_DIGITS", "from_nplm_words", "ngram_lm_from_nplm",
           "nplm_lines", "nplm_words", "read_nplm", "read_nplm_file", "write_nplm"]

NPLM_NAMES = {PAD: "<null>", UNK: "<unk>", EOS: "</s>", BOS: "<s>"}
OUR_NAMES = {nplm: ours for ours, nplm in NPLM_NAMES.items()}
SIGNIFICANT_DIGITS = 6  # NPLM's writer leaves the stream's default precision
ACTIVATION = "rectifier"
FORMAT_VERSION = 1

# The weight sections in the order NPLM writes them, with the NgramLM parameter each holds
# (NPLM's matrices are [out, in], as torch's Linear weights).
SECTIONS = (
    ("\\input_embeddings", "input_embeddings.weight"),
    ("\\hidden_weights 1", "hidden1.weight"),
    ("\\hidden_biases 1", "hidden1.bias"),
    ("\\hidden_weights 2", "hidden2.weight"),
    ("\\hidden_biases 2", "hidden2.bias"),
    ("\\output_weights", "output.weight"),
    ("\\output_biases", "output.bias"),
)
VOCAB_SECTIONS = ("\\vocab", "\\input_vocab", "\\output_vocab")
CONFIG_INTS = ("ngram_size", "vocab_size", "input_vocab_size", "output_vocab_size",
               "input_embedding_dimension", "num_hidden", "output_embedding_dimension", "version")


def nplm_words(tokens: Sequence[str]) -> list[str]:
    """The vocabulary under NPLM's names; ValueError for a word NPLM could not tell apart or read."""
    if tuple(tokens[:BOS_ID + 1]) != (PAD, UNK, EOS, BOS):
        raise ValueError(f"the CSLM's vocabulary starts with {PAD} {UNK} {EOS} {BOS}, "
                         f"not {' '.join(tokens[:BOS_ID + 1])}")
    words = [NPLM_NAMES.get(token, token) for token in tokens]
    for position, token in enumerate(tokens[BOS_ID + 1:], BOS_ID + 1):
        if token in OUR_NAMES or token in NPLM_NAMES:
            raise ValueError(f"word {position} of the vocabulary, {token!r}, is one of NPLM's special words")
        if not token or token.split() != [token]:
            raise ValueError(f"word {position} of the vocabulary, {token!r}, is not one word of NPLM's "
                             f"vocabulary (empty or with spaces)")
    return words


def from_nplm_words(words: Sequence[str]) -> list[str]:
    """NPLM's word names back under the CSLM's."""
    return [OUR_NAMES.get(word, word) for word in words]


NUMBER = f"%.{SIGNIFICANT_DIGITS}g"  # C's %g, as C++ streams print


def _matrix_lines(tensor: torch.Tensor) -> Iterator[str]:
    values = tensor.detach().float().cpu()
    if values.dim() == 1:
        for value in values.tolist():
            yield NUMBER % value
        return
    row_format = "\t".join([NUMBER] * values.shape[1])
    for block in values.split(1024):  # a block at a time as Python floats: memory stays small
        for row in block.tolist():
            yield row_format % tuple(row)


def nplm_lines(model: NgramLM, tokens: Sequence[str]) -> Iterator[str]:
    """The lines (without newlines) of `model`'s NPLM file; `tokens` are its vocabulary, by id.
    ValueError, at once, when the vocabulary does not fit the model or a weight is not finite."""
    config = model.config
    if len(tokens) != config.vocab_size:
        raise ValueError(f"the vocabulary has {len(tokens)} words, the model {config.vocab_size}")
    words = nplm_words(tokens)
    weights = model.state_dict()
    for _, name in SECTIONS:
        if not torch.isfinite(weights[name]).all():
            raise ValueError(f"the model's {name} holds a value that is not finite")
    return _lines(config, words, weights)


def _lines(config: NgramLmConfig, words: list[str], weights: dict) -> Iterator[str]:
    first, second = config.hidden_sizes
    yield from ("\\config", f"version {FORMAT_VERSION}", f"ngram_size {config.order}",
                f"input_vocab_size {config.vocab_size}", f"output_vocab_size {config.vocab_size}",
                f"input_embedding_dimension {config.embedding_size}", f"num_hidden {first}",
                f"output_embedding_dimension {second}", f"activation_function {ACTIVATION}", "")
    for header in ("\\input_vocab", "\\output_vocab"):
        yield header
        yield from words
        yield ""
    for header, name in SECTIONS:
        yield header
        yield from _matrix_lines(weights[name])
        yield ""
    yield "\\end"


def write_nplm(model: NgramLM, tokens: Sequence[str], path: Path, force: bool = False) -> int:
    """Write `model`'s NPLM file whole or not at all (plain text: NPLM reads no gzip); the lines
    written. ValueError, before anything is written, when the model cannot be laid out."""
    lines = nplm_lines(model, tokens)  # checked before the file is created
    with AtomicOutput(path, force=force, encoded=True) as out:
        for line in lines:
            out.write_line(line.encode("utf-8"))
        return out.lines_written


@dataclass
class NplmFile:
    """An NPLM model file as read: its config, vocabularies and matrices, in NPLM's own order."""

    config: dict = field(default_factory=dict)
    input_vocab: list = field(default_factory=list)
    output_vocab: list = field(default_factory=list)
    matrices: dict = field(default_factory=dict)  # section header -> numpy array (biases: 1-D)
    order: list = field(default_factory=list)  # the section headers as they came


def _numbered_lines(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(lines, 1):
        yield number, line.rstrip("\r\n")


def read_nplm_file(path: Path) -> NplmFile:
    """Parse an NPLM model file (ModelFileError naming the file and line for anything wrong)."""
    path = Path(path)
    result = NplmFile()
    try:
        with open(path, encoding="utf-8") as file:
            _parse(_numbered_lines(file), result, path)
    except UnicodeDecodeError:
        raise ModelFileError(f"{path}: not an NPLM model file (not UTF-8 text)") from None
    except OSError as error:
        raise ModelFileError(f"{path}: cannot read the NPLM model file ({error.strerror or error})") from None
    if "\\config" not in result.order:
        raise ModelFileError(f"{path}: not an NPLM model file (no \\config section)")
    return result


def _block(lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """The lines of a section, up to the empty line (or the end) that closes it."""
    for number, line in lines:
        if line == "":
            return
        yield number, line


def _parse(lines: Iterator[tuple[int, str]], result: NplmFile, path: Path) -> None:
    headers = {header for header, _ in SECTIONS}
    for number, line in lines:
        if line == "":
            continue
        if line == "\\end":
            result.order.append(line)
            return
        if line in result.order:
            raise ModelFileError(f"{path}:{number}: section {line} given twice")
        if line == "\\config":
            _read_config(_block(lines), result.config, path)
        elif line in VOCAB_SECTIONS:
            words = _read_words(_block(lines), path)
            if line != "\\output_vocab":
                result.input_vocab = words
            if line != "\\input_vocab":
                result.output_vocab = words
        elif line in headers:
            result.matrices[line] = _read_matrix(_block(lines), path, line)
        else:
            raise ModelFileError(f"{path}:{number}: not an NPLM section: {line[:60]!r}")
        result.order.append(line)


def _read_config(lines: Iterable[tuple[int, str]], config: dict, path: Path) -> None:
    for number, line in lines:
        fields = line.split()
        if len(fields) != 2:
            raise ModelFileError(f"{path}:{number}: a config line is a name and a value, not {line[:60]!r}")
        name, value = fields
        if name in CONFIG_INTS:
            try:
                config[name] = int(value)
            except ValueError:
                raise ModelFileError(f"{path}:{number}: {name} is not a whole number: {value[:30]!r}") from None
        else:
            config[name] = value


def _read_words(lines: Iterable[tuple[int, str]], path: Path) -> list[str]:
    words = []
    for number, line in lines:
        fields = line.split()
        if len(fields) != 1:
            raise ModelFileError(f"{path}:{number}: a vocabulary line holds one word, not {line[:60]!r}")
        words.append(fields[0])
    return words


def _read_matrix(lines: Iterable[tuple[int, str]], path: Path, header: str) -> np.ndarray:
    rows = []
    width = None
    for number, line in lines:
        fields = line.split()
        if width is None:
            width = len(fields)
        elif len(fields) != width:
            raise ModelFileError(f"{path}:{number}: {header}: {len(fields)} numbers where the rows "
                                 f"before have {width}")
        try:
            row = [float(value) for value in fields]
        except ValueError:
            raise ModelFileError(f"{path}:{number}: {header}: not a number in {line[:60]!r}") from None
        if not all(map(math.isfinite, row)):
            raise ModelFileError(f"{path}:{number}: {header}: a number that is not finite")
        rows.append(row)
    matrix = np.asarray(rows, dtype=np.float32).reshape(len(rows), width or 0)
    return matrix[:, 0] if header.startswith(("\\hidden_biases", "\\output_biases")) and width == 1 else matrix


def ngram_lm_from_nplm(nplm: NplmFile, path: Path) -> tuple[NgramLM, list[str]]:
    """The NgramLM an NPLM file describes and its vocabulary (the CSLM's names and id order:
    [PAD] [UNK] [EOS] <s> first, then NPLM's other words in its order)."""
    config = nplm.config
    if config.get("version", FORMAT_VERSION) != FORMAT_VERSION:
        raise ModelFileError(f"{path}: NPLM format version {config['version']}, not {FORMAT_VERSION}")
    if config.get("activation_function", ACTIVATION) != ACTIVATION:
        raise ModelFileError(f"{path}: activation {config['activation_function']}; the CSLM's is {ACTIVATION}")
    missing = [name for name in ("ngram_size", "input_embedding_dimension", "num_hidden",
                                 "output_embedding_dimension") if name not in config]
    missing += [header for header, _ in SECTIONS if header not in nplm.matrices]
    if missing:
        raise ModelFileError(f"{path}: NPLM model file lacks {', '.join(missing)}")
    if config["num_hidden"] == 0:
        raise ModelFileError(f"{path}: one hidden layer (num_hidden 0); the CSLM has two")
    if not nplm.input_vocab:
        raise ModelFileError(f"{path}: no vocabulary in the NPLM model file")
    if nplm.input_vocab != nplm.output_vocab:
        raise ModelFileError(f"{path}: its input and output vocabularies differ; the CSLM has one")
    words = nplm.input_vocab
    absent = [name for name in OUR_NAMES if name not in words]
    if absent:
        raise ModelFileError(f"{path}: the vocabulary lacks NPLM's {' '.join(absent)}")
    if len(set(words)) != len(words):
        raise ModelFileError(f"{path}: a word is given twice in the vocabulary")
    specials = [words.index(NPLM_NAMES[token]) for token in (PAD, UNK, EOS, BOS)]
    permutation = specials + [i for i, word in enumerate(words) if word not in OUR_NAMES]
    lm_config = NgramLmConfig(vocab_size=len(words), order=config["ngram_size"],
                              embedding_size=config["input_embedding_dimension"],
                              hidden_sizes=(config["num_hidden"], config["output_embedding_dimension"]))
    for name in ("input_vocab_size", "output_vocab_size", "vocab_size"):
        if config.get(name, len(words)) != len(words):
            raise ModelFileError(f"{path}: {name} {config[name]}, but the vocabulary has {len(words)} words")
    model = NgramLM(lm_config)
    weights = {}
    for header, name in SECTIONS:
        matrix = torch.from_numpy(nplm.matrices[header])
        if name.startswith(("input_embeddings", "output.")):
            matrix = matrix[permutation] if len(matrix) == len(words) else matrix
        weights[name] = matrix
    expected = {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}
    for header, name in SECTIONS:
        if tuple(weights[name].shape) != expected[name]:
            raise ModelFileError(f"{path}: {header} is {'x'.join(map(str, weights[name].shape))}, its config "
                                 f"makes it {'x'.join(map(str, expected[name]))}")
    model.load_state_dict(weights)
    model.eval()
    return model, from_nplm_words([words[i] for i in permutation])


def read_nplm(path: Path) -> tuple[NgramLM, list[str]]:
    """An NPLM model file as an NgramLM (eval mode, CPU) and its vocabulary, by id."""
    return ngram_lm_from_nplm(read_nplm_file(path), Path(path))
