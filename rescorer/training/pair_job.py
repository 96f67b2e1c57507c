"""The model kind of phrase tables and parallel corpora (the encoder-decoders), as
rescorer.training.job runs it: what `rescore train` reads and the settings that go with it,
under --resume the checkpoint's, the settings line, the training and its summary."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from rescorer.data.pair_sources import PairSource
from rescorer.io.file_names import checkpoint_path_for
from rescorer.models.settings import ModelOptions, ModelSettings
from rescorer.records import SettingError, option_name, recorded_values, signature_items
from rescorer.runtime.placement import Placement
from rescorer.training.recipes import SENTENCE_RECIPE, SUBWORD_SIZE, apply_recipe, recipe_model_options
from rescorer.training.settings import NO_SUBWORDS, TrainSettings
from rescorer.training.stop_reasons import updates_made
from rescorer.training.train_request import TrainingPlan, TrainJob

__all__ = ["training_source", "require_rereadable", "check_subword_settings", "plan", "train", "summary",
           "honest_figure"]


def require_rereadable(path: Path) -> None:
    """Training reads the table several times: stdin, a FIFO or a device cannot do that."""
    from rescorer.io.path_checks import is_stream

    if is_stream(path):
        raise SettingError(f"{path}: training reads its input several times: give a "
                           f"regular file, not a pipe or '-' (or score with --model)")


def training_source(phrase_table: Optional[Path], parallel: Optional[tuple], settings: TrainSettings,
                    explicit: frozenset) -> tuple[PairSource, TrainSettings]:
    """What `rescore train` reads, the table or the parallel corpus, and the settings for it: a
    corpus refuses the settings it cannot take and trains with the sentence recipe
    (rescorer.training.recipes.SENTENCE_RECIPE) where not told otherwise; a table's model reads
    words through shortlists unless --subwords asks for subword models learned on its phrases."""
    from rescorer.data.pair_sources import ParallelCorpusPairs, PhraseTablePairs

    if (phrase_table is None) == (parallel is None):
        raise SettingError("give a PHRASE_TABLE or --parallel SRC TGT (one of them)")
    if phrase_table is not None:
        require_rereadable(phrase_table)
        if settings.valid_src is not None:
            raise SettingError("--valid-src/--valid-tgt: a validation set of sentences goes with --parallel; a "
                               "phrase table validates on a held-out slice of its pairs (--valid-pairs)")
        if not settings.resume:  # resumed, they are the checkpoint's (rescorer.training.resume checks them)
            check_subword_settings(settings, explicit)
        return PhraseTablePairs(phrase_table), settings
    if settings.valid_src is not None and "valid_pairs" in explicit:
        raise SettingError("--valid-pairs: with --valid-src/--valid-tgt every sentence of them is the validation "
                           "set; drop --valid-pairs")
    for name in ("src_corpus", "tgt_corpus"):
        if getattr(settings, name) is not None:
            flag = option_name(TrainSettings, name)
            raise SettingError(f"{flag}: with --parallel the shortlists are counted on the corpus itself; "
                               f"drop {flag}")
    if settings.pair_weights != "unique":
        raise SettingError(f"--pair-weights {settings.pair_weights}: a parallel corpus has no pair "
                           f"counts; its sentence pairs count once each")
    for path in parallel:
        require_rereadable(path)
    if not settings.resume:  # resumed, they are the checkpoint's (rescorer.training.resume checks them)
        settings = apply_recipe(SENTENCE_RECIPE, settings, explicit)
        check_subword_settings(settings, explicit)
    return ParallelCorpusPairs(*parallel), settings


def check_subword_settings(settings: TrainSettings, explicit: frozenset) -> None:
    """With subwords the vocabularies are the subword models' pieces, so there is no shortlist
    to size; without them there are no pieces to count."""
    if settings.subwords != NO_SUBWORDS and "shortlist_size" in explicit:
        words = "" if "subwords" in explicit else ", or give --subwords none for a model of words"
        raise SettingError(f"--shortlist-size: with --subwords {settings.subwords} the vocabularies are the "
                           f"subword models' pieces; size them with --subword-size (drop --shortlist-size{words})")
    if settings.subwords == NO_SUBWORDS and "subword_size" in explicit:
        raise SettingError("--subword-size: only with --subwords bpe or unigram (the model reads words now)")
    corpora = [name for name in ("src_corpus", "tgt_corpus") if getattr(settings, name) is not None]
    if settings.subwords != NO_SUBWORDS and corpora:
        shown = ", ".join(option_name(TrainSettings, name) for name in corpora)
        raise SettingError(f"{shown}: with --subwords {settings.subwords} there are no shortlists to count: the "
                           f"vocabularies are the subword models' pieces, learned on the table's phrases; drop "
                           f"{'them' if len(corpora) > 1 else 'it'}")


def resumed(job: TrainJob) -> tuple[TrainSettings, ModelOptions, Optional[dict]]:
    """(settings, model options, checkpoint): under --resume, what the command line left at
    its defaults is the checkpoint's; otherwise a parallel corpus's model takes the sentence
    recipe's options where none was given."""
    if not job.settings.resume:
        if job.source.kind != "corpus":
            return job.settings, job.model_options, None
        return job.settings, recipe_model_options(SENTENCE_RECIPE, job.model_options, job.explicit), None
    from rescorer.training.resume import (checkpoint_to_resume, recorded_training, resumed_model_options,
                                          resumed_settings)

    payload = checkpoint_to_resume(checkpoint_path_for(job.model_path))
    recorded, recorded_model = recorded_training(payload.get("training", {}))
    return (resumed_settings(job.settings, job.explicit, recorded),
            resumed_model_options(job.model_options, job.explicit, recorded_model), payload)


def plan(job: TrainJob, placement: Placement) -> TrainingPlan:
    """The settings and the model this job trains, and its settings line."""
    from rescorer.training.distributed_trainer import check_batch_size

    settings, model_options, payload = resumed(job)
    model = ModelSettings.from_options(model_options)
    ranks = placement.ranks
    if ranks.is_distributed and settings.batch_size is not None:
        check_batch_size(settings.batch_size, ranks)
    shown = signature_items(settings.resolved(model.width()))
    if settings.subwords == NO_SUBWORDS:  # a model of words has no pieces to count
        shown["subword_size"] = "-"
    return TrainingPlan(settings, model, payload, "train", {**model.describe(), **shown},
                        recorded_options=recorded_values(model_options))


def train(job: TrainJob, plan: TrainingPlan, run, progress):
    """Train on the table or the corpus (rescorer.training.pipeline.train_on_table)."""
    from rescorer.training.pipeline import train_on_table

    return train_on_table(job.source, job.model_path, model=plan.model, settings=plan.settings, run=run)


def summary(job: TrainJob, plan: TrainingPlan, report, elapsed: float) -> list[str]:
    """What was learned and how training went, a line each."""
    settings, state, lines = plan.settings, report.state, []
    if report.vocabularies is not None and report.vocabularies.subwords is not None:
        vocab = report.vocabularies
        sizes = (len(vocab.subwords.source.pieces), len(vocab.subwords.target.pieces))
        fitted = (f" (fewer than the default {SUBWORD_SIZE}: all that the corpus allows)"
                  if settings.subword_size is None and min(sizes) < SUBWORD_SIZE else "")
        lines.append(f"subwords ({settings.subwords}) learned on {vocab.counted_from}: "
                     f"{sizes[0]} source, {sizes[1]} target pieces{fitted}")
    elif report.vocabularies is not None:
        vocab = report.vocabularies
        lines.append(f"shortlists from {vocab.counted_from}: {len(vocab.src_vocab) - 3} source, "
                     f"{len(vocab.tgt_vocab) - 3} target words; token coverage "
                     f"{vocab.src_coverage.ratio:.1%} source, {vocab.tgt_coverage.ratio:.1%} target")
    left_out = (f"; {report.too_long} longer than {settings.max_pair_length or 0} words left out"
                if report.too_long else "")
    held = (f"validated on {report.valid_pairs} sentence pairs of {report.valid_set}" if report.valid_set
            else f"{report.valid_pairs} held out")
    trained = report.num_pairs - (0 if report.valid_set else report.valid_pairs)
    lines.append(f"trained on {trained} pairs ({held}"
                 f"{left_out}): "
                 f"{updates_made(state)}, stopped: {state.stopped_because}; "
                 f"valid perplexity {state.best_valid_ppl:.2f} (update {state.best_update}"
                 f"{honest_figure(state.honest_ppl_at_best, report.honest_pairs, report.honest_unigram_ppl)}), "
                 f"unigram {report.unigram_ppl:.2f}; {state.train_tokens / max(state.seconds, 1e-9):.0f} "
                 f"target tokens/s; {elapsed:.1f} s; model {job.model_path}")
    if state.averaged_updates:
        lines.append(f"{job.model_path} holds the mean of the weights of the {len(state.averaged_updates)} best "
                     f"validations (updates {', '.join(map(str, state.averaged_updates))}): valid perplexity "
                     f"{state.averaged_valid_ppl:.2f}"
                     f"{honest_figure(state.averaged_honest_ppl, report.honest_pairs, report.honest_unigram_ppl)}")
    return lines


def honest_figure(ppl: Optional[float], num_honest: Optional[int], unigram: Optional[float] = None) -> str:
    """The honest held-out perplexity beside the held-out one (rescorer.training.honest_heldout),
    against the unigram model's on the same pairs (the summary's other unigram figure is on all
    held-out pairs, the wrong floor for these), or why there is none; nothing where it is not
    measured (sentence pairs)."""
    if num_honest is None:
        return ""
    if not num_honest:
        return "; honest n/a: every held-out pair is a piece of a training pair"
    if ppl is None:  # the best update came before a resumed checkpoint's rescorer measured it
        return "; honest n/a"
    against = f" against unigram {unigram:.2f}" if unigram is not None else ""
    return f"; honest {ppl:.2f}{against} on the {num_honest} held-out pairs no training pair contains"

