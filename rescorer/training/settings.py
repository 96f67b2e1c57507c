"""How a model is trained, in one record: every training option, declared once
(rescorer.records), torch-free so that the command line builds its options from it without
loading torch; and the CSLM's own settings (LmSettings). Resolution of the defaults that depend on others (the optimizer, the batches)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from rescorer.data.directions import DIRECTIONS
from rescorer.data.subwords import SUBWORD_KINDS
from rescorer.records import (COUNT, DIRECTORY_TO_WRITE, EXISTING_FILE, EXISTING_FILE_OR_STDIN, FLAG, INT, MAY_CHANGE, NOT_RECORDED,
                              NONNEGATIVE_FLOAT, PROBABILITY_BELOW_ONE, Kind, POSITIVE_FLOAT, POSITIVE_INT, SettingError, check_record,
                              choice, setting, stored)
from rescorer.training.budget import DEFAULT_MAX_EPOCHS
from rescorer.training.recipes import (DEFAULT_BATCH_TOKENS, LM_RECIPE, SENTENCE_RECIPE, SUBWORD_SIZE,
                                       TOKEN_BATCH_SAMPLED_WORDS, recipe_default, resolve_defaults)

__all__ = ["TrainSettings", "OPTIMIZERS", "PAIR_WEIGHTS", "LOWEST_PAIR_COUNT", "TRAIN_SETTINGS_FORMAT", "LR_SCHEDULES",
           "schedule_share", "SUBWORDS", "NO_SUBWORDS", "LmSettings", "LM_SETTINGS_FORMAT", "DEFAULT_LOG_Z_PENALTY"]

OPTIMIZERS = ("adadelta", "adam")
LR_SCHEDULES = ("constant", "inverse-sqrt")
PAIR_WEIGHTS = ("unique", "count", "log-count")
# The c(pair) a weighting refuses at or below (naming the table line), and why: log-count weighs a
# pair 1 + ln c(pair), which is not positive for c <= 1/e. (Every weighting refuses c <= 0.)
LOWEST_PAIR_COUNT = {"log-count": (math.exp(-1), " (1/e): --pair-weights log-count would weigh the pair "
                                                 "1 + ln c(pair) <= 0 (--pair-weights count takes it)")}
# How a sentence model reads text: words through shortlists, or the pieces of a subword model
# learned on each side of its corpus (--parallel's default, the sentence recipe's: a phrase
# table's models keep words).
NO_SUBWORDS = "none"
SUBWORDS = (NO_SUBWORDS, *SUBWORD_KINDS)
# A checkpoint's stored training settings: 2, field names in {"format", "fields"}; before it (no
# format), `options` held the raw command-line options and `settings` the resolved ones.
TRAIN_SETTINGS_FORMAT = 2


def parallel_default(name: str) -> str:
    """How a help text says the sentence recipe's value of `name`: '0.1 with --parallel'."""
    return recipe_default(SENTENCE_RECIPE, name)


def lm_default(name: str) -> str:
    """How a help text says the LM recipe's value of `name`: '6 with --lm'."""
    return recipe_default(LM_RECIPE, name)


def schedule_share(update: int, warmup_updates: int, schedule: str) -> float:
    """The share of the peak learning rate at update `update` (counted from 1): a linear rise
    over the warm-up, then 1 (constant) or sqrt(warmup / update) (inverse-sqrt, fairseq's and
    Vaswani et al.'s decay). A function of the update alone, so a resumed run steps as an
    uninterrupted one."""
    if warmup_updates and update < warmup_updates:
        return update / warmup_updates
    if schedule == "inverse-sqrt":
        return math.sqrt(warmup_updates / update)
    return 1.0


@dataclass(frozen=True)
class TrainSettings:
    """How a model is trained: every training option, declared once (rescorer.records). The
    options, the settings signature, what a checkpoint stores and the resume check come from
    these fields; `resume` says which a resumed run may change. The batches drawn at update u
    depend only on (seed, u), so the MAY_CHANGE ones change no weight of the updates both runs
    make."""

    # None: the preset's. A checkpoint records the size used (the preset's filled in), so that a
    # resume asking for another is refused: the model's shortlists are the checkpoint's.
    shortlist_size: Optional[int] = setting(
        None, POSITIVE_INT, "Words per side in the shortlist [default: the preset's, 15000 for small].",
        option="--shortlist-size", show_default=False)
    src_corpus: Optional[Path] = setting(None, EXISTING_FILE_OR_STDIN,
                                         "Tokenized source corpus to count the shortlist on.",
                                         option="--src-corpus", show_default=False, resume=NOT_RECORDED)
    tgt_corpus: Optional[Path] = setting(None, EXISTING_FILE_OR_STDIN,
                                         "Tokenized target corpus to count the shortlist on.",
                                         option="--tgt-corpus", show_default=False, resume=NOT_RECORDED)
    # One sentencepiece model per side, learned on that side of the corpus (or of the table's
    # phrases), stored in the model file; its pieces are the vocabulary (no shortlist, no [UNK]).
    subwords: str = setting(
        NO_SUBWORDS, choice(*SUBWORDS),
        f"Read each side as the pieces of a subword model learned on it (the corpus's sentences, or the "
        f"table's phrases; sentencepiece BPE or unigram, with byte fallback: no [UNK]) and kept in the model "
        f"file; none: words through shortlists [default: {NO_SUBWORDS}; {parallel_default('subwords')}].",
        option="--subwords", show_default=False)
    # None: SUBWORD_SIZE, or all that a smaller corpus allows (a checkpoint records SUBWORD_SIZE)
    subword_size: Optional[int] = setting(
        None, POSITIVE_INT, "Pieces per side with --subwords (the 256 byte pieces included) [default: "
                            f"{SUBWORD_SIZE}, or as many as less text allows].", option="--subword-size",
        show_default=False)
    direction: str = setting("forward", choice(*DIRECTIONS),
                             "forward: log p(target | source), the paper's; inverse: log p(source | target), "
                             "trained on the table with its phrases swapped.", option="--direction")
    # How much each pair counts in the loss: `unique`, each pair once (the paper: frequencies
    # ignored); `count`, by the table's c(pair); `log-count`, by 1 + ln c(pair).
    pair_weights: str = setting("unique", choice(*PAIR_WEIGHTS),
                                "How much each pair counts in training: once (the paper's), by the table's "
                                "c(pair), or by 1 + ln c(pair).", option="--pair-weights")
    # tokens per length-sorted batch (batch_schedule); None: DEFAULT_BATCH_TOKENS unless batch_size
    batch_tokens: Optional[int] = setting(
        None, POSITIVE_INT, "Batches of same-length pairs holding about this many tokens, every pair once "
                            f"per epoch [default: {DEFAULT_BATCH_TOKENS}, unless --batch-size; "
                            f"{parallel_default('batch_tokens')}].",
        option="--batch-tokens", show_default=False)
    batch_size: Optional[int] = setting(  # random pairs per update (the paper: 64)
        None, POSITIVE_INT, "Instead of --batch-tokens: this many random pairs per update (Cho et al.: 64); with --lm, random "
                            f"n-grams [default: {LM_RECIPE.training['batch_size']}].",
        option="--batch-size", show_default=False)
    optimizer: str = setting("adam", choice(*OPTIMIZERS), "Cho et al.: adadelta.", option="--optimizer")
    # None, for these three: the default of the optimizer and batches (resolve_defaults)
    learning_rate: Optional[float] = setting(
        None, POSITIVE_FLOAT, "[default: 1.0 for Adadelta; for Adam 3e-3 with --batch-tokens, times 512 / the "
                              "model's width where it is wider (the hidden size; a Transformer's embedding "
                              "size): about 1.5e-3 for the recurrent paper presets, 3e-3 for the Transformer's; "
                              f"1e-3 with --batch-size, {lm_default('learning_rate')}; with --parallel and Adam "
                              f"{SENTENCE_RECIPE.training['learning_rate']:g}]", option="--learning-rate",
        show_default=False)
    warmup_updates: Optional[int] = setting(
        None, COUNT, "Raise the learning rate linearly over the first N updates [default: 100 for Adam "
                     "with --batch-tokens, else 0; with --parallel and Adam "
                     f"{SENTENCE_RECIPE.training['warmup_updates']}].", option="--warmup-updates", show_default=False)
    lr_schedule: str = setting("constant", choice(*LR_SCHEDULES),
                               "After the warm-up: keep the learning rate (constant), or multiply it by "
                               "sqrt(warm-up updates / update) (inverse-sqrt; needs --warmup-updates > 0). "
                               f"--lr-decay multiplies either [default: constant; {parallel_default('lr_schedule')} "
                               f"and a warm-up].", option="--lr-schedule", show_default=False)
    sampled_softmax: Optional[int] = setting(
        None, COUNT, "Train the softmax on N sampled words and the gold one instead of the whole shortlist; "
                     f"0: the whole one [default: {TOKEN_BATCH_SAMPLED_WORDS} with --batch-tokens, else 0]. Perplexity and scores "
                     "always use the whole softmax.", option="--sampled-softmax", show_default=False)
    # Szegedy et al. (2016); 0.1 in fairseq's small-data recipe, 0.2 in Sennrich & Zhang (2019).
    # Defined on the whole softmax only: with it, --sampled-softmax defaults to 0 and is refused.
    label_smoothing: float = setting(
        0.0, PROBABILITY_BELOW_ONE, "Train on (1 - EPS) * NLL + EPS * the mean over the shortlist of -log p "
                                    "(label smoothing; needs the whole softmax, so --sampled-softmax defaults "
                                    "to 0). Held-out perplexity stays the plain one [default: 0; "
                                    f"{parallel_default('label_smoothing')}].",
        option="--label-smoothing", metavar="EPS", show_default=False)
    # fairseq's small-data Transformer recipe: 1e-4 (decoupled, AdamW).
    weight_decay: float = setting(0.0, NONNEGATIVE_FLOAT,
                                  "Weight decay W: with Adam decoupled (AdamW: each update multiplies every "
                                  "weight by 1 - lr * W); with Adadelta W * weight added to the gradient "
                                  "[default: 0; with --parallel and Adam "
                                  f"{SENTENCE_RECIPE.training['weight_decay']:g}].",
                                  option="--weight-decay", show_default=False)
    clip_norm: float = setting(1.0, POSITIVE_FLOAT, "Gradient norm clipping.", option="--clip-norm")
    # The learning rate decays on plateau, as Schwenk's CSLM toolkit and most small-data recipes
    # do: a validation without a new best multiplies it by this (1: constant after warm-up).
    lr_decay: float = setting(1.0, Kind("float", minimum=0, min_open=True, maximum=1),
                              "On a validation without improvement, multiply the learning rate by this "
                              f"(0.5: halve it); 1: keep it [default: 1; {lm_default('lr_decay')}].", option="--lr-decay",
                              show_default=False)
    max_updates: Optional[int] = setting(  # None: only the epoch bound
        None, POSITIVE_INT, "Stop after this many updates (also bounded by --max-epochs).",
        option="--max-updates", show_default=False, resume=MAY_CHANGE)
    max_epochs: Optional[float] = setting(  # None: only max_updates
        DEFAULT_MAX_EPOCHS, POSITIVE_FLOAT, "Bound on passes over the training pairs; early stopping usually "
                                            f"ends training before it [default: {DEFAULT_MAX_EPOCHS:g}; "
                                            f"{parallel_default('max_epochs')}].", option="--max-epochs",
        show_default=False, resume=MAY_CHANGE)
    max_seconds: Optional[float] = setting(
        None, POSITIVE_FLOAT, "Stop once training has taken this many seconds in all (a resumed run counts the "
        "checkpoint's seconds too, as --max-updates counts its updates).", option="--max-time", show_default=False,
        resume=MAY_CHANGE, legacy_names=("max_time",))
    valid_pairs: int = setting(2000, POSITIVE_INT, "Held-out pairs for validation perplexity (with --lm: sentences, "
                                                   f"default {LM_RECIPE.training['valid_pairs']}). A phrase table's summary also gives the perplexity "
                                                   "of the held-out pairs that no training pair contains (honest); "
                                                   "early stopping goes by all of them.",
                               option="--valid-pairs")
    # The dev set as whole sentences, instead of a hashed slice of the training pairs (27 bible
    # verses of such a slice were duplicated in training): early stopping and the kept model are
    # then chosen on text the model never trains on.
    valid_src: Optional[Path] = setting(
        None, EXISTING_FILE, "With --parallel: validate on this source text (one sentence a line, gzip "
                             "allowed; e.g. the dev set) and --valid-tgt instead of a held-out slice of the "
                             "training pairs, every sentence of it, whatever its length.",
        option="--valid-src", show_default=False)
    valid_tgt: Optional[Path] = setting(None, EXISTING_FILE, "The target side of --valid-src, line for line.",
                                        option="--valid-tgt", show_default=False)
    valid_every: int = setting(250, POSITIVE_INT, "Updates between validations (held-out perplexity, early "
                               f"stopping, the kept best model) [{lm_default('valid_every')}].", option="--valid-every", resume=MAY_CHANGE)
    patience: int = setting(4, POSITIVE_INT, "Validations without improvement before stopping early [default: 4; "
                                             f"{lm_default('patience')}; {parallel_default('patience')}].",
                            option="--patience", resume=MAY_CHANGE, show_default=False)
    # Vaswani et al. (2017) average the last 5 checkpoints; here the N best validated ones, so
    # that a run stopped late by --patience averages no worse weights than its best.
    average: int = setting(0, COUNT, "Write as the model the mean of the weights of the N best validations "
                                     "(held-out perplexity), kept in memory and in the checkpoint; 0 or 1: "
                                     f"the best one alone [default: 0; {parallel_default('average')}].",
                    option="--average", metavar="N", show_default=False)
    checkpoint_every: int = setting(1000, POSITIVE_INT, "Updates between checkpoints (MODEL.checkpoint, what "
                                    "--resume continues from).", option="--checkpoint-every", resume=MAY_CHANGE)
    seed: int = setting(1, INT, "Seed of the initial weights, the held-out pairs and the batches: the same seed "
                                "gives the same model on the same CPU and torch, on one thread or two.",
                        option="--seed")
    resume: bool = setting(False, FLAG, "Continue from MODEL.checkpoint (and, when scoring, from the units an "
                                        "interrupted run finished).", option="--resume", show_default=False,
                           resume=NOT_RECORDED)
    cache_dir: Optional[Path] = setting(None, DIRECTORY_TO_WRITE, "Where the encoded pairs go [default: "
                                                                  "MODEL.cache].",
                                        option="--cache-dir", show_default=False, resume=NOT_RECORDED)
    # Pairs with more words on either side are left out of training (the table's phrases are
    # 7 words at most by Moses' default; a 10,000-word target made each update take minutes).
    # None (0 on the command line): no bound. The scorer still scores every line.
    max_pair_length: Optional[int] = setting(
        50, COUNT, "Leave pairs with more words on either side out of training (counted in the summary; 0: "
                   f"no bound). Scoring still scores every line [default: 50; "
                   f"{parallel_default('max_pair_length')}, as "
                   "Moses' clean-corpus-n is usually run].", option="--max-pair-length", show_default=False)

    def __post_init__(self) -> None:
        check_record(self)
        if self.batch_size is not None and self.batch_tokens is not None:
            raise SettingError("--batch-size (random pairs, the paper's) and --batch-tokens (length-sorted "
                               "batches) are two ways to batch: give one")
        if not self.resume:  # resumed, the checkpoint's settings went together and the resume check
            self.check_combinations()  # names each one asked for that differs from them
        if self.max_pair_length == 0:
            object.__setattr__(self, "max_pair_length", None)

    def check_combinations(self) -> None:
        """Refuse settings that do not go together, in one line."""
        if self.lr_schedule == "inverse-sqrt" and not resolve_defaults(asdict(self))["warmup_updates"]:
            raise SettingError("--lr-schedule inverse-sqrt decays from the end of the warm-up: give "
                               "--warmup-updates N > 0")
        if (self.valid_src is None) != (self.valid_tgt is None):
            raise SettingError("--valid-src and --valid-tgt go together: give both sides of the validation set")
        if self.label_smoothing and self.sampled_softmax:
            raise SettingError(f"--label-smoothing {self.label_smoothing:g} is defined on the whole softmax: "
                               f"drop --sampled-softmax {self.sampled_softmax} (or give 0)")

    def resolved(self, model_width: Optional[int] = None) -> "TrainSettings":
        """These settings with every None default filled in (resolve_defaults), for a model
        `model_width` wide (rescorer.models.model_width; None: as wide as `small`)."""
        return type(self)(**resolve_defaults(asdict(self), model_width))

    def stored(self) -> dict:
        """What a checkpoint keeps: the recorded fields by name, with the format version."""
        return stored(self, TRAIN_SETTINGS_FORMAT)


# -- the CSLM (`rescore train --lm`): what it has beyond what every model shares. Its defaults of
# the shared settings are a recipe (rescorer.training.recipes.LM_RECIPE).
LM_SETTINGS_FORMAT = 1
# alpha of the log-partition penalty alpha * (log Z)^2 (Devlin et al. 2014, who used 0.1): it
# keeps log Z near 0 so that an exported model's unnormalized scores are log-probabilities
# (NPLM, Moses' NeuralLM) at little cost in perplexity: benchmarks/RESULTS.md, "CSLM".
DEFAULT_LOG_Z_PENALTY = 0.1


@dataclass(frozen=True)
class LmSettings:
    """The CSLM's own training settings (with --lm)."""

    order: int = setting(7, Kind("int", minimum=2),
                         "With --lm: the n of the n-gram model, n-1 words of context (Cho et al.: 7).",
                         option="--order")
    log_z_penalty: float = setting(
        DEFAULT_LOG_Z_PENALTY, NONNEGATIVE_FLOAT,
        "With --lm: alpha of the self-normalization penalty alpha * (log Z)^2 added to the loss (Devlin et "
        "al. 2014), so that the model's unnormalized scores are log-probabilities (the NPLM export); 0: "
        "none.", option="--log-z-penalty")

    def __post_init__(self) -> None:
        check_record(self)

    def stored(self) -> dict:
        return stored(self, LM_SETTINGS_FORMAT)
