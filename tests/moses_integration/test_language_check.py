"""An n-best list that is not in a sentence model's language and tokenization is refused in one
line before anything is written, by `moses rescore-nbest` and by the scoring step `moses rerank`
and the ablation's reranked rows share: a word model judges the hypotheses' words by its
vocabulary, a subword model (which reads every string) by how many pieces it cuts them into
against its training text; a subword model refuses text that is not UTF-8, naming the line."""

import gzip
import re

import pytest

from moses_integration.errors import NbestFormatError
from moses_integration.nbest.language_check import JUDGED_WORDS, LEAST_KNOWN_SHARE, MOST_PIECES_RATIO
from moses_integration.nbest.rnn_features import iter_feature_values
from moses_integration.nbest.sentence_models import sentence_features
from rescorer.models.model_files import read_model_file
from rescorer.scoring.rnn_scorer import InProcessScorer
from tests.fake_moses import FIXTURES
from tests.helpers import SHARED, first_lines, rescore

CORPUS = SHARED / "data" / "bible-en-fr" / "corpus"
TINY = ["--preset", "tiny", "--valid-pairs", "20", "--valid-every", "10", "--seed", "3", "--batch-tokens", "500",
        "--max-pair-length", "30"]
SENTENCES = 3  # the dev sentences whose 100-best lists the tests read

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no corpus at {CORPUS}")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """{"subwords", "words", "inverse"}: tiny sentence models of the corpus's first 200 verses
    (a 400-piece BPE one trained 20 updates, a word one and an inverse BPE one 2 updates)."""
    directory = tmp_path_factory.mktemp("models")
    sides = (first_lines(CORPUS / "train.en.gz", 200, directory / "train.en"),
             first_lines(CORPUS / "train.fr.gz", 200, directory / "train.fr"))
    made = {}
    for name, extra in (("subwords", ["--subwords", "bpe", "--subword-size", "400", "--max-updates", "20"]),
                        ("words", ["--subwords", "none", "--max-updates", "2"]),
                        ("inverse", ["--subwords", "bpe", "--subword-size", "400", "--max-updates", "2",
                                     "--direction", "inverse"])):
        made[name] = directory / f"{name}.pt"
        run = rescore("train", "--parallel", *sides, "-o", made[name], *TINY, *extra)
        assert run.returncode == 0, run.stderr
    return made


@pytest.fixture(scope="module")
def lists(tmp_path_factory):
    """(French list, English list, their source): Moses' 100-best lists of the first dev
    sentences, and the same lines with each hypothesis replaced by its English source."""
    directory = tmp_path_factory.mktemp("lists")
    source = first_lines(CORPUS / "dev.en.gz", SENTENCES, directory / "dev.en")
    with gzip.open(FIXTURES / "tuning/run1.best100.out.gz", "rt", encoding="utf-8") as handle:
        french = [line for line in handle if int(line.split(" ||| ")[0]) < SENTENCES]
    sources = source.read_text(encoding="utf-8").splitlines()
    english = []
    for line in french:
        fields = line.split(" ||| ")
        english.append(" ||| ".join([fields[0], f" {sources[int(fields[0])]} ", *fields[2:]]))
    paths = directory / "fr.nbest", directory / "en.nbest"
    for path, lines in zip(paths, (french, english)):
        path.write_text("".join(lines), encoding="utf-8")
    assert sum(len(line.split(" ||| ")[1].split()) for line in french) >= JUDGED_WORDS
    return (*paths, source)


def _hypotheses(path):
    return [line.split(" ||| ")[1].strip() for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("kind, said", [
    ("subwords", r"the hypotheses' words take (\d+\.\d+) subword pieces each in {model}, (\d+\.\d+) times the "
                 r"(\d+\.\d+) of its training text: is the list in that model's language and tokenization\? "
                 r"\(a list that is takes about as many\)"),
    ("words", r"only (\d+)% of the hypotheses' words are in the vocabulary of {model}: is the list in that "
              r"model's language and tokenization\? \(a list that is has most of its words in it\)"),
])
def test_rescore_nbest_refuses_a_list_in_another_language_in_one_line(models, lists, tmp_path, kind, said):
    french, english, source = lists
    model, out = models[kind], tmp_path / "out.nbest"
    run = rescore("moses", "rescore-nbest", english, "--input", source, "--model", model, "-o", out)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    lines = len(english.read_text().splitlines())
    last = run.stderr.strip().splitlines()[-1]
    said = said.format(model=re.escape(str(model)))
    found = re.fullmatch(f"Error: {re.escape(str(english))}: lines 1-{lines}: {said}", last)
    assert found, last
    if kind == "subwords":
        assert float(found.group(2)) > MOST_PIECES_RATIO
        assert float(found.group(3)) == pytest.approx(read_model_file(model)["training"]["pieces_per_word"]["target"],
                                                      abs=0.005)
    else:
        assert int(found.group(1)) < 100 * LEAST_KNOWN_SHARE
    assert not out.exists()
    # the French list passes the same check, and is scored
    run = rescore("moses", "rescore-nbest", french, "--input", source, "--model", model, "-o", out)
    assert run.returncode == 0, run.stderr
    assert len(list(iter_feature_values(out, "RNN0"))) == lines


def test_the_rerank_and_ablation_scoring_step_refuses_it_too(models, lists, tmp_path):
    french, english, source = lists
    features = sentence_features(InProcessScorer("cpu", "fp32"), [models["subwords"], models["words"]],
                                 per_word=True)
    out = tmp_path / "out.nbest"
    with pytest.raises(NbestFormatError, match=f"^{english}: lines 1-[0-9]+: the hypotheses' words take"):
        features.add(english, source, out)
    assert not out.exists()
    features.add(french, source, out)
    assert features.names == ["RNNfwd", "RNNfwdPerWord", "RNNfwd2", "RNNfwd2PerWord"]
    assert len(list(iter_feature_values(out, "RNNfwd2"))) == len(french.read_text().splitlines())


def test_a_subword_model_judges_the_side_that_reads_the_hypotheses(models, lists):
    """An inverse model reads a hypothesis with its source side: the forward model's target
    side, the same French subword model learned on the same verses."""
    french, english, _ = lists
    scorer = InProcessScorer("cpu", "fp32")
    hypotheses = _hypotheses(french)
    forward = scorer.pieces_per_word(models["subwords"], hypotheses)
    assert scorer.pieces_per_word(models["inverse"], hypotheses) == pytest.approx(forward)
    assert forward[0] < MOST_PIECES_RATIO * forward[1]
    found, trained = scorer.pieces_per_word(models["subwords"], _hypotheses(english))
    assert found > MOST_PIECES_RATIO * trained
    assert scorer.pieces_per_word(models["words"], hypotheses) is None
    assert scorer.known_share(models["subwords"], _hypotheses(english)) == 1.0  # byte fallback: every string


@pytest.mark.parametrize("where", ["hypothesis", "source"])
def test_text_a_subword_model_cannot_segment_is_named_by_its_line(models, lists, tmp_path, where):
    """A byte that is not UTF-8 (sentencepiece would read it as U+FFFD): the file and line, nothing
    written; a word model scores the same list, keeping the byte."""
    french, _, source = lists
    nbest, sources = tmp_path / "bad.nbest", tmp_path / "bad.en"
    list_lines = french.read_bytes().split(b"\n")
    source_lines = source.read_bytes().split(b"\n")
    if where == "hypothesis":
        fields = list_lines[1].split(b" ||| ")
        list_lines[1] = b" ||| ".join([fields[0], b" \xff" + fields[1].lstrip(), *fields[2:]])
    else:
        source_lines[1] = b"\xff " + source_lines[1]
    nbest.write_bytes(b"\n".join(list_lines))
    sources.write_bytes(b"\n".join(source_lines))
    out = tmp_path / "out.nbest"
    run = rescore("moses", "rescore-nbest", nbest, "--input", sources, "--model", models["subwords"], "-o", out)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    named = f"{nbest}:2" if where == "hypothesis" else f"{sources}:2"
    assert run.stderr.strip().splitlines()[-1] == (f"Error: {named}: byte 0xFF at character 1 is not UTF-8: the "
                                                   f"subword model {models['subwords']} reads UTF-8 text")
    assert not out.exists()
    run = rescore("moses", "rescore-nbest", nbest, "--input", sources, "--model", models["words"], "-o", out)
    assert run.returncode == 0, run.stderr
    assert (b"\xff" in out.read_bytes()) == (where == "hypothesis")
