"""One self-contained model file: format version, config, vocabularies, weights, training state.

Only plain Python types and tensors are stored, so `torch.load(weights_only=True)` reads it and
a file from elsewhere cannot run code on load. Written to a temporary file, then renamed.

Format versions: 2 records the architecture and all its settings in `config`. Version 1 (0.1.0)
held a cho2014 GRU model, whose config dict is a valid version-2 config (its defaults); on load
it is upgraded in memory: its encoder's weights move under `encoder.forward_layers.0.`, where
the stackable encoder keeps its first layer. The scores are unchanged.

Subwords: a sentence model trained with `--subwords` keeps its two sentencepiece models under
`subwords` ({"source": ..., "target": ...}, rescorer.data.subwords.SubwordSides.to_stored), its
vocabularies being their pieces; a file without the entry holds a word model, read as before.

Kinds: `kind` says what the file holds: "phrase", a phrase or sentence model (src/tgt
vocabularies; files without `kind` are of this kind), or "lm", the CSLM target language model
(one vocabulary; rescorer.models.lm_files). Each loader refuses the other kind in one line.
"""

from __future__ import annotations

import os
import pickle
import pickletools
import re
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional

import torch

from rescorer import __version__
from rescorer.data.directions import DIRECTIONS
from rescorer.data.subwords import SubwordSides
from rescorer.data.text_encoding import SideEncoding
from rescorer.data.vocabulary import Vocabulary
from rescorer.errors import ModelFileError
from rescorer.io.file_names import temporary_name
from rescorer.models import ModelConfig, PhraseScorer, build_model
from rescorer.runtime.failure_reports import is_out_of_memory

FORMAT_NAME = "rescorer-model"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
PHRASE_KIND, LM_KIND = "phrase", "lm"
REQUIRED_KEYS = ("format", "format_version", "package_version", "config", "src_vocab",
                 "tgt_vocab", "weights", "training")
REQUIRED_KEYS_BY_KIND = {PHRASE_KIND: REQUIRED_KEYS,
                         LM_KIND: ("format", "format_version", "package_version", "config", "vocab",
                                   "weights", "training")}
# What each kind is, and where it goes, for the one line that refuses the other kind.
KIND_DESCRIPTIONS = {
    PHRASE_KIND: "a phrase model (written by `rescore train PHRASE_TABLE` or `--parallel`), not a "
                 "language model: give a model written by `rescore train --lm`",
    LM_KIND: "a target language model (kind lm, written by `rescore train --lm`), not a phrase "
             "model: give it where a language model is expected (--lm)",
}


@dataclass
class ModelBundle:
    """A model with everything needed to score text: its vocabularies and how it was trained."""

    model: PhraseScorer
    src_vocab: Vocabulary
    tgt_vocab: Vocabulary
    training: dict = field(default_factory=dict)
    direction: str = "forward"  # rescorer.data.directions: inverse models score log p(source | target)
    subwords: Optional[SubwordSides] = None  # a subword sentence model's; None: a word model

    @property
    def config(self) -> ModelConfig:
        return self.model.config

    @property
    def src_encoding(self) -> SideEncoding:
        """How the model reads its source side's text (words, or its subword pieces)."""
        return SideEncoding(self.src_vocab, self.subwords.source if self.subwords else None)

    @property
    def tgt_encoding(self) -> SideEncoding:
        """How the model reads and writes its target side's text."""
        return SideEncoding(self.tgt_vocab, self.subwords.target if self.subwords else None)


def save_model(bundle: ModelBundle, path: Path, extra: Optional[dict] = None) -> None:
    """Write the bundle atomically; `extra` adds entries such as optimizer state."""
    write_model_payload(bundle_payload(PHRASE_KIND, bundle, {
        "src_vocab": list(bundle.src_vocab.tokens),
        "tgt_vocab": list(bundle.tgt_vocab.tokens),
        "direction": bundle.direction,
        **({"subwords": bundle.subwords.to_stored()} if bundle.subwords is not None else {}),
    }, extra), path)


def bundle_payload(kind: str, bundle, own: dict, extra: Optional[dict] = None) -> dict:
    """What a model file of `kind` holds: the entries of every kind (format, versions, kind, the
    model's config and weights on the CPU, how it was trained), the kind's `own` (vocabularies),
    then `extra` (a checkpoint's optimizer state)."""
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "package_version": __version__,
        "kind": kind,
        "config": bundle.config.to_dict(),
        **own,
        "weights": {name: t.detach().cpu() for name, t in bundle.model.state_dict().items()},
        "training": dict(bundle.training),
        **(extra or {}),
    }


def write_model_payload(payload: dict, path: Path) -> None:
    """torch.save `payload` to `path` through a temporary file and a rename (never half-written)."""
    path = Path(path)
    temporary = path.with_name(temporary_name(path))
    file = None
    try:
        with open(temporary, "wb") as raw:
            file = _RecordingWriter(raw)
            torch.save(payload, file)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(temporary, path)
    except (OSError, RuntimeError) as error:
        # torch turns an OSError of the file's write() into its own RuntimeError: report the OSError
        cause = file.error if file is not None and file.error is not None else error
        raise ModelFileError(f"{path}: cannot write the model file ({_write_reason(cause)})") from None
    finally:
        temporary.unlink(missing_ok=True)


class _RecordingWriter:
    """A file's write() that remembers the OSError it raised (a full disk) for the message."""

    def __init__(self, file):
        self.file = file
        self.error: Optional[OSError] = None

    def write(self, data) -> int:
        try:
            return self.file.write(data)
        except OSError as error:
            self.error = error
            raise

    def flush(self) -> None:
        self.file.flush()


def _write_reason(error: BaseException) -> str:
    """'no space left on device' from an OSError, or torch's first line for its own writer errors."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror[:1].lower() + error.strerror[1:]
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text


def read_model_file(path: Path) -> dict:
    """The checked payload of a model file; ModelFileError naming the file for anything wrong."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: model file not found")
    with open(path, "rb") as file:
        head = file.read(4)
    if not head.startswith((b"PK\x03\x04", b"\x80")):  # a PyTorch archive, or a pickle
        begins = f"begins {head!r}" if head else "is empty"
        raise ModelFileError(f"{path}: not a model file (a rescorer model is a PyTorch archive; "
                             f"this file {begins})")
    try:
        with warnings.catch_warnings():  # torch's warnings about a foreign pickle: the error says it
            warnings.simplefilter("ignore")
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        unsafe = unsafe_global(path, str(error))
        if unsafe is not None:  # loading it would import (and could call) this: never done
            raise ModelFileError(f"{path}: refused for safety: the file would load {unsafe}, not only "
                                 f"tensors and plain data (not a rescorer model file)") from None
        raise ModelFileError(f"{path}: not a readable model file, truncated or corrupt") from None
    except (RuntimeError, EOFError, zipfile.BadZipFile, OSError, ValueError, KeyError, IndexError,
            TypeError, AttributeError) as error:
        if is_out_of_memory(error):  # a sound file too large for the memory left: not "corrupt"
            raise
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ModelFileError(f"{path}: not a readable model file, truncated or corrupt ({reason})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT_NAME:
        raise ModelFileError(f"{path}: not a rescorer model file (no '{FORMAT_NAME}' header)")
    if payload.get("format_version") not in READABLE_VERSIONS:
        raise ModelFileError(f"{path}: model format version {payload.get('format_version')!r}, "
                             f"this rescorer {__version__} reads versions "
                             f"{', '.join(map(str, READABLE_VERSIONS))}")
    kind = model_kind(payload)
    if kind not in REQUIRED_KEYS_BY_KIND:
        raise ModelFileError(f"{path}: model of unknown kind {kind!r} (this rescorer {__version__} reads "
                             f"{', '.join(REQUIRED_KEYS_BY_KIND)})")
    missing = [key for key in REQUIRED_KEYS_BY_KIND[kind] if key not in payload]
    if missing:
        raise ModelFileError(f"{path}: model file lacks {', '.join(missing)}")
    return upgrade_payload(payload)


def model_kind(payload: dict) -> str:
    """'phrase' or 'lm': what a payload holds (files from before kinds hold phrase models)."""
    return payload.get("kind", PHRASE_KIND)


def require_kind(payload: dict, path: Path, kind: str) -> None:
    """Refuse, in one line, a model file of another kind than the caller loads."""
    found = model_kind(payload)
    if found != kind:
        raise ModelFileError(f"{path}: {KIND_DESCRIPTIONS[found]}")


def upgrade_payload(payload: dict) -> dict:
    """A version-1 payload as version 2 (see the module docstring); version 2 as it is."""
    if payload["format_version"] != 1:
        return payload

    def renamed(weights: dict) -> dict:
        return {("encoder.forward_layers.0." + name[len("encoder."):] if name.startswith("encoder.")
                 else name): tensor for name, tensor in weights.items()}

    upgraded = {**payload, "format_version": FORMAT_VERSION, "upgraded_from": 1,
                "weights": renamed(payload["weights"])}
    if isinstance(payload.get("best_weights"), dict):  # a version-1 training checkpoint
        upgraded["best_weights"] = renamed(payload["best_weights"])
    return upgraded


def unsafe_global(path: Path, message: str) -> Optional[str]:
    """The first class or function a refused pickle names (e.g. 'posix.system'), or None when
    it names none (the file is then damaged, not dangerous).

    torch names it for a zip file ("GLOBAL posix.system"); a bare pickle (the old format) is
    refused before its globals are reached, so its opcodes are scanned here, never executed.
    """
    match = re.search(r"GLOBAL ([\w.]+)|[Uu]nsupported global:? (?:GLOBAL )?([\w.]+)", message)
    if match:
        return match.group(1) or match.group(2)
    if zipfile.is_zipfile(path):
        return None
    strings: list[str] = []
    try:
        with open(path, "rb") as file:
            for opcode, argument, _ in pickletools.genops(file):
                if opcode.name in ("GLOBAL", "INST"):
                    return str(argument).replace(" ", ".")
                if isinstance(argument, str):
                    strings.append(argument)
                if opcode.name == "STACK_GLOBAL":
                    return ".".join(strings[-2:]) if len(strings) >= 2 else "a global"
                if opcode.name in ("REDUCE", "OBJ", "NEWOBJ", "NEWOBJ_EX", "BUILD"):
                    return "an object"
    except Exception:  # not a pickle at all: damaged
        return None
    return None


def load_model(path: Path, device: Optional[torch.device] = None) -> ModelBundle:
    """Load a model file for scoring (eval mode, on `device`, default CPU)."""
    bundle = bundle_from_payload(read_model_file(path), path)
    if device is not None:
        bundle.model.to(device)
    return bundle


def check_shapes(build: Callable[[], torch.nn.Module], weights: dict, path: Path) -> None:
    """Refuse a config that its weights do not fit before building the model for real (a config
    claiming hidden_size 6000 over 48-wide weights took 74 s to build and initialise): the
    skeleton (`build()`, a model of the file's config) is built on the meta device, without
    memory or initialisation. Every kind's file is checked by this one function."""
    try:
        with torch.device("meta"):
            skeleton = build()
    except NotImplementedError:  # an operation meta tensors lack: load_state_dict will tell
        return
    expected = {name: tuple(tensor.shape) for name, tensor in skeleton.state_dict().items()}
    found = {name: tuple(getattr(tensor, "shape", ())) for name, tensor in weights.items()}
    for name in sorted(set(expected) | set(found)):
        if expected.get(name) != found.get(name):
            raise ModelFileError(
                f"{path}: model file does not match its own config ({name}: "
                f"{'absent' if name not in found else 'shape ' + str(list(found[name]))} in the file, "
                f"{'absent' if name not in expected else 'shape ' + str(list(expected[name]))} by the config)")


def bundle_from_payload(payload: dict, path: Path) -> ModelBundle:
    """The model (eval mode, CPU) of a payload read by `read_model_file`; `path` names errors."""
    require_kind(payload, path, PHRASE_KIND)
    try:
        config = ModelConfig.from_dict(payload["config"])
        check_shapes(lambda: build_model(config), payload["weights"], path)
        model = build_model(config)
        model.load_state_dict(payload["weights"])
        bundle = ModelBundle(model, Vocabulary(payload["src_vocab"]),
                             Vocabulary(payload["tgt_vocab"]), dict(payload["training"]),
                             payload.get("direction", "forward"),  # files before 0.2 are forward
                             _stored_subwords(payload, path))
        if bundle.direction not in DIRECTIONS:
            raise ModelFileError(f"{path}: unknown direction {bundle.direction!r} (valid: "
                                 f"{', '.join(DIRECTIONS)})")
    except ModelFileError:
        raise
    except (ValueError, TypeError, RuntimeError, KeyError) as error:
        reason = str(error).splitlines()[0]
        raise ModelFileError(f"{path}: model file does not match its own config ({reason})") from None
    if len(bundle.src_vocab) != config.src_vocab_size or len(bundle.tgt_vocab) != config.tgt_vocab_size:
        raise ModelFileError(f"{path}: vocabulary sizes differ from the model config")
    model.eval()
    return bundle


def _stored_subwords(payload: dict, path: Path) -> Optional[SubwordSides]:
    """The file's subword models (None for a word model), checked against its vocabularies."""
    if "subwords" not in payload:
        return None
    try:
        subwords = SubwordSides.from_stored(payload["subwords"])
    except (KeyError, TypeError, ValueError, RuntimeError, OSError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ModelFileError(f"{path}: its subword models cannot be read ({reason})") from None
    for side, model, vocab in (("source", subwords.source, payload["src_vocab"]),
                               ("target", subwords.target, payload["tgt_vocab"])):
        if model.vocabulary().tokens != list(vocab):
            raise ModelFileError(f"{path}: its {side} vocabulary is not its {side} subword model's pieces")
    return subwords


def weight_bytes(model: torch.nn.Module) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of every weight in name order: what the unit journal hashes to tell that
    a model changed (io takes bytes, not tensors)."""
    for key, tensor in sorted(model.state_dict().items()):
        yield key, _tensor_bytes(tensor.detach())


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    """A tensor's data; a tensor subclass (an int8 weight under --precision int8) by its parts."""
    if hasattr(tensor, "__tensor_flatten__"):
        names, _ = tensor.__tensor_flatten__()
        return b"".join(_tensor_bytes(getattr(tensor, name)) for name in names)
    return tensor.cpu().contiguous().numpy().tobytes()
