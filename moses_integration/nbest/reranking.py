"""Rerank a tuned Moses system's n-best lists with sentence models' scores: `rescore moses rerank`.

The steps, each kept in the output directory with a record of what it was made from
(`steps/<step>.json`, step_provenance.py), so that a rerun reuses a finished step only when its
inputs (files by checksum, models by content), settings and results are those recorded, and
redoes it otherwise (every file is written whole or not at all):

0. `dev.decoder.nbest`, `test.decoder.nbest`: the tuned system's n-best lists (`moses
   -n-best-list FILE N distinct`), unless the lists are given.
1. `dev.nbest.gz`, `test.nbest.gz`: the n-best lists with the models' features added
   (`add_features`, given by the command, which has the models).
2. `dev.features.dat`, `dev.scores.dat`: Moses' extractor on the dev list, against every reference.
3. `seed<S>/weights.json`: mert or kbmira, once per seed, started from the tuned system's own
   weights (from its moses.ini) and `initial_weight` for each new feature.
4. `seed<S>/test.reranked`, `dev.reranked`: each sentence's hypothesis of highest weighted score.
5. `results.md`, `results.csv` (written by every run, from the steps' files): BLEU and chrF of the decoder's 1-best and of the
   reranked outputs (mean ± sd over the seeds) against one or more references, and the paired
   test (approximate randomization by default) of the reranked outputs against the 1-best.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Callable, Optional, Sequence

import pandas as pd

from rescorer.counts import counted
from rescorer.io.atomic_output import atomic_paths, write_atomically

from ..errors import MosesConfigError
from ..evaluation.results_table import mean_sd, mean_sd_text, p_text
from ..evaluation.scores import compare, decode, score
from ..ini.moses_ini import MosesIni
from ..ini.moses_install import MosesInstall
from ..line_files import count_lines, read_lines
from ..preflight import ParallelSet
from ..settings import RerankSettings
from ..step_provenance import Step, check, files_of, fingerprint, forget, ini_files, record
from ..tables.filtering import filter_for_test, filtered_ini
from .candidates import first_best, read_nbest, rerank
from .nbest_lines import check_nbest
from .sentence_models import SentenceFeatures
from .python_extractor import extract_in_python
from .weight_tuning import extract, feature_names, tune_in_numpy, tune_weights

__all__ = ["run_rerank", "start_weights"]



def start_weights(ini: MosesIni, names: Sequence[str], initial_weight: float) -> dict:
    """The ini's weight of each extractor name (`LM0_0` is LM0's first weight), and
    `initial_weight` for a feature the ini has no weight for (a new one)."""
    ini_weights = ini.all_weights()
    start = {}
    for name in names:
        base, _, index = name.rpartition("_")
        values = ini_weights.get(base, [])
        start[name] = values[int(index)] if index.isdigit() and int(index) < len(values) else initial_weight
    return start


def _write_text(path: Path, text: str) -> None:
    """Written beside the target and renamed: the file is whole or absent, which is what tells a
    rerun that its step is done."""
    write_atomically(path, text.encode("utf-8", "surrogateescape"))  # bytes read as line_files.decoded


def _write_json(path: Path, data) -> None:
    _write_text(path, json.dumps(data, indent=1) + "\n")


def _write_lines(path: Path, lines: Sequence[str]) -> None:
    _write_text(path, "".join(line + "\n" for line in lines))


def decode_nbest(install: MosesInstall, settings: RerankSettings, data: ParallelSet, path: Path) -> Path:
    """The tuned system's `nbest_size` distinct best hypotheses of every sentence of `data`,
    decoded with its text tables filtered for the set (a text table is otherwise loaded whole)."""
    ini_path = settings.ini_path
    ini = MosesIni.read(ini_path)
    ini.make_paths_absolute(settings.base_dir)
    if settings.filter_tables and ini.phrase_table().kind == "PhraseDictionaryMemory":
        table = ini.phrase_table()
        filtered = filter_for_test(install, ini, table.name, data.src_path,
                                   path.with_name(f"{data.label}-filtered"))
        ini_path = path.with_name(f"{data.label}.moses.ini")
        filtered_ini(ini, table.name, filtered.table_path, filtered).write(ini_path)
    with atomic_paths(path) as (partial,):
        flags = [*settings.decoder_flags, "-n-best-list", str(partial.resolve()), str(settings.nbest_size), "distinct"]
        decode(install, ini_path, data.src_path, path.with_name(path.name + ".1best"), settings.threads,
               settings.base_dir, decoder_flags=flags)
    return path


class _Steps:
    """The steps of one run: each reused when its record matches (step_provenance.check), else
    (re)made and recorded; the files of the finished ones, for the note of an interrupt."""

    def __init__(self, out_dir: Path, report: Callable[[str], None]) -> None:
        self.out_dir, self.report, self.finished = out_dir, report, []

    def step(self, key: str, name: str, results: Sequence[Path], inputs: dict, settings: dict) -> Step:
        return Step(name, self.out_dir / "steps" / f"{key}.json", results, inputs, settings)

    def ensure(self, step: Step, make: Callable[[], None], doing: str) -> None:
        """Reuse the step's results or make them (`doing` says what, when it is done)."""
        reason = check(step)
        if reason is not None:
            again = step.record_path.is_file() or any(Path(path).is_file() for path in step.results)
            self.report(f"{doing} again: {reason}" if again else doing)
            forget(step)
            make()
            record(step)
        self.finished += [Path(path).name for path in step.results]

    def kept_note(self) -> str:
        """What an interrupted run leaves in out_dir, and how to go on from it."""
        if not self.finished:
            return f"no step had finished, no results were written ({self.out_dir})"
        files = ", ".join(dict.fromkeys(self.finished))
        return (f"no results were written; the finished steps are kept in {self.out_dir} ({files}): "
                "rerun the same command to continue from them")


def _decoded(steps: _Steps, install: MosesInstall, settings: RerankSettings, data: ParallelSet) -> Path:
    path = settings.out_dir / f"{data.label}.decoder.nbest"
    step = steps.step(f"decode-{data.label}", f"the {data.label} set's decoded n-best list", [path],
                      {"ini": fingerprint(settings.ini_path),
                       "ini's files": ini_files(settings.ini_path, settings.base_dir),
                       "source": fingerprint(data.src_path)},
                      {"nbest_size": settings.nbest_size, "decoder_flags": list(settings.decoder_flags),
                       "filter_tables": settings.filter_tables})
    steps.ensure(step, lambda: decode_nbest(install, settings, data, path),
                 f"decoding the {data.label} set's {settings.nbest_size}-best lists with {settings.ini_path}")
    return path


def _scored_lists(settings: RerankSettings, install: MosesInstall, features: SentenceFeatures, steps: _Steps) -> dict:
    lists = {}
    for label, nbest, data in (("dev", settings.dev_nbest, settings.dev_set),
                               ("test", settings.test_nbest, settings.test_set)):
        if nbest is None:
            nbest = _decoded(steps, install, settings, data)
        path = settings.out_dir / f"{label}.nbest.gz"
        step = steps.step(f"score-{label}", f"the {label} list scored with the models", [path],
                          {"n-best list": fingerprint(nbest), "source": fingerprint(data.src_path),
                           "models": files_of(features.scored_with)},
                          {"features": list(features.names), **features.scoring})

        def make(nbest=nbest, data=data, path=path):
            features.add(nbest, data.src_path, path)  # checks the whole list, naming its lines, before scoring

        names = ", ".join(features.names)
        steps.ensure(step, make, f"scoring the {label} n-best list {nbest} for the features {names}")
        lists[label] = path
    return lists


def _plain_references(settings: RerankSettings) -> list:
    """The dev references uncompressed (`dev.ref0`, ...): the extractor reads them as plain text."""
    paths = []
    for i, ref in enumerate(settings.dev_set.ref_paths):
        path = settings.out_dir / f"dev.ref{i}"
        _write_lines(path, read_lines(ref))
        paths.append(path)
    return paths


_TUNERS = ("moses", "numpy")  # who runs the optimizer, once `moses rerank` has resolved auto


def _tuner_name(settings: RerankSettings) -> str:
    if settings.tuner == "moses":
        return "Moses' own"
    return f"this package's {settings.optimizer_program.upper()} in numpy"


def _tuner_setting(settings: RerankSettings) -> dict:
    """The tuner in a step's record only when it is numpy, so that the records of runs made
    before the choice existed (Moses' programs) still match."""
    return {"tuner": settings.tuner} if settings.tuner != "moses" else {}


def _tuned(settings: RerankSettings, install: MosesInstall, dev_list: Path, steps: _Steps) -> dict:
    features, scores = settings.out_dir / "dev.features.dat", settings.out_dir / "dev.scores.dat"
    step = steps.step("extract-dev", "the dev list's extracted features and BLEU statistics", [features, scores],
                      {"dev list": fingerprint(dev_list), "references": files_of(settings.dev_set.ref_paths)},
                      _tuner_setting(settings))
    if settings.tuner == "numpy":
        steps.ensure(step, lambda: extract_in_python(dev_list, read_lines(settings.dev_set.src_path),
                                                     settings.dev_set.ref_paths, features, scores),
                     "extracting the dev list's features and BLEU statistics (in Python)")
    else:
        steps.ensure(step, lambda: extract(install, dev_list, _plain_references(settings), features, scores),
                     "extracting the dev list's features and BLEU statistics (extractor)")
    start = start_weights(MosesIni.read(settings.ini_path), feature_names(features), settings.start_weight)
    tuned = {}
    for seed in settings.seed_range:
        path = settings.out_dir / f"seed{seed}" / "weights.json"
        step = steps.step(f"tune-seed{seed}", f"seed {seed}'s reranking weights", [path],
                          {"features": fingerprint(features), "statistics": fingerprint(scores)},
                          {"optimizer": settings.optimizer_program, **_tuner_setting(settings), "seed": seed,
                           "initial_weight": settings.start_weight, "start weights": start})

        def make(seed=seed, path=path):
            path.parent.mkdir(parents=True, exist_ok=True)
            result = (tune_in_numpy(features, scores, start, seed, optimizer=settings.optimizer_program)
                      if settings.tuner == "numpy" else
                      tune_weights(install, settings.optimizer_program, features, scores, start, seed, path.parent))
            _write_json(path, {"optimizer": settings.optimizer_program, "dev_bleu_nbest": result.dev_bleu,
                               "weights": result.weights})

        steps.ensure(step, make, f"seed {seed}: tuning the reranking weights ({settings.optimizer_program})")
        tuned[seed] = json.loads(path.read_text())
    return tuned


def _reranked(settings: RerankSettings, lists: dict, sentences: dict, tuned: dict, steps: _Steps) -> dict:
    """Each seed's reranked dev and test outputs."""
    outputs = {}
    for seed, found in tuned.items():
        outputs[seed] = {}
        for label in ("dev", "test"):
            path = settings.out_dir / f"seed{seed}" / f"{label}.reranked"
            step = steps.step(f"rerank-seed{seed}-{label}", f"seed {seed}'s reranked {label} output", [path],
                              {"scored list": fingerprint(lists[label]),
                               "weights": fingerprint(settings.out_dir / f"seed{seed}" / "weights.json")}, {})
            steps.ensure(step, lambda path=path, label=label: _write_lines(path, rerank(sentences[label],
                                                                                          found["weights"])),
                         f"seed {seed}: reranking the {label} lists")
            outputs[seed][label] = read_lines(path)
    return outputs


def run_rerank(settings: RerankSettings, install: Optional[MosesInstall], features: SentenceFeatures,
               report: Callable[[str], None] = lambda message: None) -> pd.DataFrame:
    """All the steps (see the module's docstring) of `moses rerank`'s record, its tuner resolved
    ("moses" or "numpy", not "auto"); returns the results table. An interrupt leaves with `.note`
    saying which finished steps out_dir keeps for a rerun."""
    if settings.tuner not in _TUNERS:
        raise ValueError(f"run_rerank takes a resolved tuner ({' or '.join(_TUNERS)}), not {settings.tuner!r}")
    # The decoder runs in --base-dir: the paths given on the command line are made absolute first.
    settings = replace(settings, ini_path=settings.ini_path.resolve(), out_dir=settings.out_dir.resolve())
    sources = check_sets(settings)
    settings.out_dir.mkdir(parents=True, exist_ok=True)
    steps = _Steps(settings.out_dir, report)
    try:
        lists = _scored_lists(settings, install, features, steps)
        tuned = _tuned(settings, install, lists["dev"], steps)
        sentences = {label: read_nbest(lists[label], sources[label], f"the {label} source") for label in lists}
        outputs = _reranked(settings, lists, sentences, tuned, steps)
        refs = {label: [read_lines(p) for p in data.ref_paths] for label, data in
                (("dev", settings.dev_set), ("test", settings.test_set))}
        baseline = {label: first_best(sentences[label]) for label in sentences}
        _write_lines(settings.out_dir / "test.1best", baseline["test"])
        table = _results(settings, tuned, baseline, outputs, refs, features.names)
        _write_tables(settings, table, refs)
    except KeyboardInterrupt as interrupt:
        interrupt.note = steps.kept_note()
        raise
    return table


def _results(settings: RerankSettings, tuned: dict, baseline: dict, outputs: dict, refs: dict,
             new_features: Sequence[str]) -> pd.DataFrame:
    lang = settings.detokenize_lang
    seeds = list(tuned)
    base_test = score(baseline["test"], refs["test"], "test.1best", lang)
    base_dev = score(baseline["dev"], refs["dev"], "dev.1best", lang)
    rows = [{"system": "1-best", "seeds": "–", "dev_bleu": base_dev.bleu, "dev_bleu_sd": math.nan,
             "test_bleu": base_test.bleu, "test_bleu_sd": math.nan, "test_chrf": base_test.chrf,
             "test_chrf_sd": math.nan, "delta_test_bleu": 0.0, "p_bleu": None, "p_chrf": None,
             "p_bleu_per_seed": "", "new_feature_weights": ""}]
    tests = [score(outputs[s]["test"], refs["test"], f"seed{s}/test.reranked", lang) for s in seeds]
    devs = [score(outputs[s]["dev"], refs["dev"], f"seed{s}/dev.reranked", lang) for s in seeds]
    together = compare([("1-best", baseline["test"] * len(seeds)),
                        ("rerank", [line for s in seeds for line in outputs[s]["test"]])],
                       [stream * len(seeds) for stream in refs["test"]], settings.test_type,
                       settings.num_samples, detokenize_lang=lang)["rerank"]
    per_seed = [compare([("1-best", baseline["test"]), ("rerank", outputs[s]["test"])], refs["test"],
                        settings.test_type, settings.num_samples, detokenize_lang=lang)["rerank"]["bleu"]
                for s in seeds]
    (dev_bleu, dev_sd), (test_bleu, test_sd), (chrf, chrf_sd) = (
        mean_sd([r.bleu for r in devs]), mean_sd([r.bleu for r in tests]), mean_sd([r.chrf for r in tests]))
    rows.append({"system": f"+rerank ({settings.optimizer_program})", "seeds": ",".join(map(str, seeds)),
                 "dev_bleu": dev_bleu, "dev_bleu_sd": dev_sd, "test_bleu": test_bleu, "test_bleu_sd": test_sd,
                 "test_chrf": chrf, "test_chrf_sd": chrf_sd, "delta_test_bleu": test_bleu - base_test.bleu,
                 "p_bleu": together["bleu"], "p_chrf": together["chrf"],
                 "p_bleu_per_seed": ", ".join(f"{p:.4f}" for p in per_seed),
                 "new_feature_weights": _weights(tuned, new_features)})
    return pd.DataFrame(rows)


def _weights(tuned: dict, new_features: Sequence[str]) -> str:
    """Each new feature's tuned weight (mert-normalized, sum |w| = 1), mean ± sd over seeds."""
    parts = []
    for name in new_features:
        mean, sd = mean_sd([found["weights"].get(f"{name}_0") for found in tuned.values()])
        parts.append(f"{name} {mean:.4f}" + ("" if math.isnan(sd) else f" ± {sd:.4f}"))
    return "; ".join(parts)


def _write_tables(settings: RerankSettings, table: pd.DataFrame, refs: dict) -> None:
    header = ["System", "Seeds", "Dev BLEU", "Test BLEU", "Δ Test BLEU", "p (BLEU)", "Test chrF", "p (chrF)",
              "p (BLEU) per seed", "New-feature weights"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for i, row in table.iterrows():
        lines.append("| " + " | ".join([
            row.system, row.seeds, mean_sd_text(row.dev_bleu, row.dev_bleu_sd),
            mean_sd_text(row.test_bleu, row.test_bleu_sd),
            "–" if i == 0 else f"{row.delta_test_bleu:+.2f}", p_text(row.p_bleu),
            mean_sd_text(row.test_chrf, row.test_chrf_sd), p_text(row.p_chrf), row.p_bleu_per_seed or "–",
            row.new_feature_weights or "–"]) + " |")
    lines += ["", f"BLEU and chrF against {len(refs['test'])} reference(s), {len(refs['test'][0])} test "
              f"and {len(refs['dev'][0])} dev sentences. 1-best: the decoder's own first hypothesis. "
              f"+rerank: weights tuned on the dev n-best lists by {settings.optimizer_program} "
              f"({_tuner_name(settings)}), one run "
              f"per seed, mean ± sample sd over the seeds. p: {settings.test_type.upper()} test of the seeds' "
              f"concatenated test outputs against the 1-best repeated (Clark et al. 2011); p per seed: the "
              f"same test of each seed alone. New-feature weights: normalized as mert-moses.pl does "
              f"(sum |w| = 1)."]
    _write_text(settings.out_dir / "results.md", "\n".join(lines) + "\n")
    _write_text(settings.out_dir / "results.csv", table.to_csv(index=False, float_format="%.4f"))


def check_sets(settings: RerankSettings) -> dict:
    """Before any decoding or scoring: each set has sentences, each reference its source's number
    of lines, and a given n-best list is whole, with hypotheses for every sentence (every field of
    every line checked: nbest_lines.check_nbest). Returns the source sentences of each set."""
    sources = {}
    for label, data, nbest in (("dev", settings.dev_set, settings.dev_nbest),
                               ("test", settings.test_set, settings.test_nbest)):
        sources[label] = read_lines(data.src_path)
        if not sources[label]:
            raise MosesConfigError(f"{data.src_path}: the {label} source is empty; reranking needs "
                                   f"dev sentences to tune on and test sentences to rerank")
        for ref in data.ref_paths:
            found = count_lines(ref)
            if found != len(sources[label]):
                raise MosesConfigError(f"{ref}: {counted(found, 'line')}, but the {label} source "
                                       f"{data.src_path} has {len(sources[label])}")
        if nbest is not None:
            check_nbest(nbest, sources[label], f"the {label} source {data.src_path}")
    return sources
