"""`rescore train --parallel --subwords bpe|unigram`: a sentence model over the pieces of subword
models learned on each side of its corpus and kept in its file; its translations and n-best
scores read and write the corpus's own words; resume, refusals and bad corpora."""

import gzip
import itertools
import math
import re

import numpy as np
import pytest
import torch

from moses_integration.nbest.rnn_features import iter_feature_values
from rescorer.data.length_caps import cap_of, measure_length_cap
from rescorer.data.pair_cache import PairCache
from rescorer.data.vocabulary import EOS_ID, PAD_ID
from rescorer.models.model_files import load_model, read_model_file
from rescorer.scoring.batch_scoring import score_pairs
from rescorer.scoring.translation import SearchSettings, translate_file
from rescorer.training.resume import recorded_training
from tests.fake_moses import FIXTURES
from tests.helpers import EXAMPLE_TABLE, SHARED, first_lines, rescore

CORPUS = SHARED / "data" / "bible-en-fr" / "corpus"
LINES = 200
SIZE = "400"
TINY = ["--preset", "tiny", "--valid-pairs", "20", "--valid-every", "10", "--seed", "3", "--batch-tokens", "500"]
SUBWORDS = ["--subwords", "bpe", "--subword-size", SIZE]

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no corpus at {CORPUS}")


def _sides(directory):
    return (first_lines(CORPUS / "train.en.gz", LINES, directory / "train.en.gz"),
            first_lines(CORPUS / "train.fr.gz", LINES, directory / "train.fr"))


def _lines(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()


@pytest.fixture()
def sides(tmp_path):
    return _sides(tmp_path)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(model path, corpus sides, training's stderr): a tiny BPE sentence model, trained once."""
    directory = tmp_path_factory.mktemp("subwords")
    sides = _sides(directory)
    model = directory / "bpe.pt"
    run = rescore("train", "--parallel", *sides, "-o", model, *TINY, *SUBWORDS, "--max-updates", "20",
                  "--max-pair-length", "30")
    assert run.returncode == 0, run.stderr
    return model, sides, run.stderr


def test_the_model_reads_pieces_learned_on_each_side(trained):
    model, sides, said = trained
    assert "subwords (bpe) learned on parallel corpus train.en.gz, train.fr: 400 source, 400 target pieces" in said
    bundle = load_model(model)
    assert bundle.subwords.source.kind == bundle.subwords.target.kind == "bpe"
    assert bundle.src_vocab == bundle.subwords.source.vocabulary() and len(bundle.src_vocab) == 3 + 400 - 1
    english = " ".join(_lines(sides[0]))
    assert bundle.subwords.source.join(bundle.subwords.source.segment(english)) == english
    # the length bound counts words, as Moses' clean-corpus-n does, not pieces
    long_pairs = sum(1 for e, f in zip(_lines(sides[0]), _lines(sides[1]))
                     if max(len(e.split()), len(f.split())) > 30)
    trained_pairs, held = map(int, re.search(r"trained on (\d+) pairs \((\d+) held out", said).groups())
    assert long_pairs > 0 and trained_pairs + held == LINES - long_pairs
    fields = recorded_training(read_model_file(model)["training"])[0]
    assert (fields["subwords"], fields["subword_size"], fields["shortlist_size"]) == ("bpe", 400, None)


def test_translations_are_words_with_no_unk_and_no_piece_marks(trained, tmp_path):
    model, _, _ = trained
    source = tmp_path / "in.en"
    source.write_text("in the beginning god created the heavens\n\nthe Zqxwzy of Ésaïe said ,\nand the earth\n")
    out, nbest = tmp_path / "out.fr", tmp_path / "out.nbest"
    run = rescore("translate", model, "--input", source, "-o", out, "--beam", "3", "--nbest-size", "3",
                  "--nbest-out", nbest)
    assert run.returncode == 0, run.stderr
    assert re.search(r"4 lines translated \(1 empty line left empty.*source read as \d+ subword pieces", run.stderr)
    lines = out.read_text().split("\n")
    assert len(lines) == 5 and lines[1] == "" and all(lines[i] for i in (0, 2, 3))
    hypotheses = [row.split(" ||| ")[1] for row in nbest.read_text().splitlines()]
    assert len(hypotheses) == 9
    for text in lines + hypotheses:
        assert "[UNK]" not in text and "\u2581" not in text and "[EOS]" not in text
        assert text == " ".join(text.split())  # the corpus's tokenization: single spaces
    # a subword model's input must be UTF-8: the line is named, nothing is written
    source.write_bytes(b"in the beginning\nthe \xff god\n")
    run = rescore("translate", model, "--input", source, "-o", tmp_path / "bad.fr")
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1] == (f"Error: {source}:2: byte 0xFF at character 5 is not UTF-8: a "
                                                   f"subword model reads UTF-8 text")
    assert not (tmp_path / "bad.fr").exists()


def _trained_pairs(sides):
    """The corpus pairs training kept: those of at most 30 words a side (--max-pair-length)."""
    return [(e, f) for e, f in zip(_lines(sides[0]), _lines(sides[1])) if max(len(e.split()), len(f.split())) <= 30]


def test_the_file_keeps_each_sides_pieces_per_word_of_its_training_pairs(trained):
    """The figure an n-best list's words are compared with (moses_integration.nbest.language_check)."""
    model, sides, _ = trained
    bundle = load_model(model)
    pairs = _trained_pairs(sides)
    kept = read_model_file(model)["training"]["pieces_per_word"]
    for side, lines, subwords in (("source", [e for e, _ in pairs], bundle.subwords.source),
                                  ("target", [f for _, f in pairs], bundle.subwords.target)):
        pieces, words = sum(len(subwords.segment(line)) for line in lines), sum(len(line.split()) for line in lines)
        assert type(kept[side]) is float and kept[side] == pytest.approx(pieces / words) and pieces > words


def test_translate_bounds_the_output_pieces_by_the_cap_of_the_source_pieces(trained, tmp_path):
    """The cap a + b * source length is measured on the training pairs' pieces, and translate
    applies it to pieces: a model made never to end, and to say one whole-word piece at every
    step, stops each translation at a + b * its source's pieces of that piece (not at a + b *
    its source's words, nor at any other bound)."""
    model, sides, _ = trained
    bundle = load_model(model)
    source_model, target_model = bundle.subwords.source, bundle.subwords.target
    pairs = _trained_pairs(sides)
    cap = bundle.training["length_cap"]
    assert cap == measure_length_cap(np.array([len(source_model.segment(e)) for e, _ in pairs]),
                                     np.array([len(target_model.segment(f)) for _, f in pairs]))
    word = next(token for token in bundle.tgt_vocab.tokens
                if token.startswith("\u2581") and len(token) > 3 and target_model.segment(token[1:]) == [token])
    with torch.no_grad():
        bundle.model.output_left.bias[EOS_ID] = -1e4  # [EOS] only where the bound forces it
        bundle.model.output_left.bias[bundle.tgt_vocab.index[word]] = 1e4
    lines = ["in the beginning god created the heavens", "the Zqxwzy of Ésaïe said ,", "and"]
    source, out = tmp_path / "in.en", tmp_path / "out.fr"
    source.write_text("\n".join(lines) + "\n")
    summary = translate_file(bundle, source, out, SearchSettings(beam=2))
    assert summary.forced_ends == len(lines)
    pieces = [len(source_model.segment(line)) for line in lines]
    bounds = [cap_of(count, cap["slack"], cap["ratio"]) for count in pieces]
    assert bounds != [cap_of(len(line.split()), cap["slack"], cap["ratio"]) for line in lines]
    assert out.read_text().splitlines() == [" ".join([word[1:]] * bound) for bound in bounds]


def _piece_log_p(bundle, source: str, hypothesis: str) -> float:
    """log p(hypothesis | source) stepped piece by piece through the decoder, the end included."""
    src = bundle.src_vocab.encode(bundle.subwords.source.segment(source))
    tgt = bundle.tgt_vocab.encode(bundle.subwords.target.segment(hypothesis)) + [EOS_ID]
    state = bundle.model.start(torch.tensor([src]), torch.tensor([len(src)]))
    previous, total = torch.tensor([PAD_ID]), 0.0
    with torch.no_grad():
        for piece in tgt:
            log_probs, state, _ = bundle.model.step(state, previous)
            total += float(log_probs[0, piece])
            previous = torch.tensor([piece])
    return total


def test_rescore_nbest_gives_the_sum_of_the_pieces_log_p(trained, tmp_path):
    model, _, _ = trained
    with gzip.open(FIXTURES / "tuning/run1.best100.out.gz", "rb") as handle:
        lines = [line for line in handle if int(line.split(b" ||| ")[0]) < 2][:40:2]
    nbest, out = tmp_path / "dev.nbest", tmp_path / "out.nbest"
    nbest.write_bytes(b"".join(lines))
    sources = first_lines(FIXTURES / "corpus/dev.en.gz", 2, tmp_path / "dev.en")
    run = rescore("moses", "rescore-nbest", nbest, "--input", sources, "--model", model, "-o", out)
    assert run.returncode == 0, run.stderr
    bundle = load_model(model)
    source_lines = _lines(sources)
    rows = [line.decode("utf-8").split(" ||| ") for line in lines]
    expected = [_piece_log_p(bundle, source_lines[int(row[0])], row[1].strip()) for row in rows]
    assert list(iter_feature_values(out, "RNN0")) == pytest.approx(expected, rel=1e-5)
    pieces = sum(len(bundle.subwords.target.segment(row[1])) for row in rows)
    assert pieces > sum(len(row[1].split()) for row in rows)  # words were split: pieces were scored


def test_a_validation_set_is_read_as_pieces(tmp_path, sides):
    """--valid-src/--valid-tgt through the model's subword models: its cache holds each target's
    pieces, and the reported held-out perplexity is exp(-log p / (pieces + one end each)) of the
    kept model, not a perplexity over words (which [UNK] would make of most of them)."""
    with gzip.open(CORPUS / "train.en.gz", "rb") as en, gzip.open(CORPUS / "train.fr.gz", "rb") as fr:
        pairs = list(itertools.islice(zip(en, fr), LINES, LINES + 30))  # sentences training never reads
    dev = tmp_path / "dev.en", tmp_path / "dev.fr"
    for path, side in zip(dev, zip(*pairs)):
        path.write_bytes(b"".join(side))
    model = tmp_path / "m.pt"
    run = rescore("train", "--parallel", *sides, "-o", model, "--preset", "tiny", "--valid-every", "5", "--seed", "3",
                  "--batch-tokens", "500", *SUBWORDS, "--max-updates", "10", "--valid-src", dev[0], "--valid-tgt", dev[1],
                  "--average", "0")  # the kept model is the best validation's
    assert run.returncode == 0, run.stderr
    assert "validated on 30 sentence pairs of dev.en, dev.fr" in run.stderr
    bundle = load_model(model)
    valid = list(zip(_lines(dev[0]), _lines(dev[1])))
    pieces = [len(bundle.subwords.target.segment(tgt)) for _, tgt in valid]
    words = sum(len(tgt.split()) for _, tgt in valid)
    cache = PairCache(tmp_path / "m.pt.cache" / "valid")
    assert cache.lengths("tgt").tolist() == pieces and sum(pieces) > words  # pieces, not words
    assert cache.lengths("src").tolist() == [len(bundle.subwords.source.segment(src)) for src, _ in valid]
    logp = score_pairs(bundle, valid, device="cpu", precision="fp32")
    reported = read_model_file(model)["training"]["state"]["best_valid_ppl"]
    assert reported == pytest.approx(math.exp(-logp.sum() / (sum(pieces) + len(valid))), rel=1e-5)


def test_an_inverse_model_reads_the_corpus_target_as_its_source(trained, tmp_path):
    model, sides, _ = trained
    inverse = tmp_path / "inv.pt"
    run = rescore("train", "--parallel", *sides, "-o", inverse, *TINY, *SUBWORDS, "--max-updates", "2",
                  "--direction", "inverse")
    assert run.returncode == 0, run.stderr
    forward, backward = load_model(model), load_model(inverse)
    assert backward.subwords.source == forward.subwords.target and backward.subwords.target == forward.subwords.source
    assert backward.src_vocab == forward.tgt_vocab


def test_resume_reuses_the_subword_models_and_refuses_other_subword_settings(tmp_path, sides):
    model = tmp_path / "m.pt"
    common = ["-o", model, *TINY, "--checkpoint-every", "5"]
    assert rescore("train", "--parallel", *sides, *common, *SUBWORDS, "--max-updates", "5").returncode == 0
    learned = load_model(model).subwords
    run = rescore("train", "--parallel", *sides, *common, "--max-updates", "10", "--resume")
    assert run.returncode == 0, run.stderr
    assert "learning subwords" not in run.stderr and "learned on" not in run.stderr
    assert read_model_file(model)["training"]["state"]["updates"] == 10 and load_model(model).subwords == learned
    for other, said in ((["--subword-size", "450"], "subword-size 400 (checkpoint) vs 450 (now)"),
                        (["--subwords", "unigram"], "subwords 'bpe' (checkpoint) vs 'unigram' (now)"),
                        (["--subwords", "none"], "subwords 'bpe' (checkpoint) vs 'none' (now)")):
        run = rescore("train", "--parallel", *sides, *common, "--max-updates", "15", "--resume", *other)
        assert run.returncode == 1 and "Traceback" not in run.stderr
        last = run.stderr.strip().splitlines()[-1]
        assert last.startswith("Error: ") and said in last and "--resume asks for other settings" in last


def test_none_reads_words_through_shortlists(tmp_path, sides):
    model = tmp_path / "words.pt"
    run = rescore("train", "--parallel", *sides, "-o", model, *TINY, "--max-updates", "2", "--subwords", "none")
    assert run.returncode == 0, run.stderr
    assert "shortlists from parallel corpus" in run.stderr and "subwords" not in run.stderr.split("\n", 1)[1]
    assert "|subwords:none|subword-size:-|" in run.stderr.splitlines()[0]  # no pieces to size
    assert "subwords" not in read_model_file(model) and load_model(model).subwords is None
    assert recorded_training(read_model_file(model)["training"])[0]["subwords"] == "none"


@pytest.mark.parametrize("args, said", [
    (["TABLE", "--subwords", "bpe", "--src-corpus", "SRC"], "--src-corpus: with --subwords bpe there are no "
     "shortlists to count: the vocabularies are the subword models' pieces, learned on the table's phrases"),
    (["TABLE", "--subwords", "bpe", "--shortlist-size", "100"],
     "--shortlist-size: with --subwords bpe the vocabularies are the subword models' pieces"),
    (["TABLE", "--subword-size", "500"], "--subword-size: only with --subwords bpe or unigram"),
    (["--lm", "TGT", "--subwords", "bpe", "--subword-size", "500"],
     "--subwords, --subword-size: not for a language model (--lm)"),
    (["--parallel", "SRC", "TGT", "--subwords", "bpe", "--shortlist-size", "100"],
     "--shortlist-size: with --subwords bpe the vocabularies are the subword models' pieces"),
    (["--parallel", "SRC", "TGT", "--subwords", "none", "--subword-size", "500"],
     "--subword-size: only with --subwords bpe or unigram"),
])
def test_settings_that_do_not_go_with_subwords_are_refused(tmp_path, sides, args, said):
    args = [str(EXAMPLE_TABLE) if a == "TABLE" else str(sides[0]) if a == "SRC" else str(sides[1]) if a == "TGT"
            else a for a in args]
    run = rescore("train", *args, "-o", tmp_path / "m.pt", *TINY[:2])
    assert run.returncode == 2 and said in run.stderr, run.stderr
    assert not (tmp_path / "m.pt").exists()


@pytest.mark.parametrize("size, said", [
    ("50000", r"train\.en\.gz: too little text for --subword-size 50000: it allows at most \d+ bpe pieces"),
    ("100", r"train\.en\.gz: --subword-size 100 is less than its characters and the 256 byte pieces need: "
            r"at least \d+$"),
])
def test_a_side_too_small_for_the_size_is_named_with_the_sizes_it_allows(tmp_path, sides, size, said):
    model = tmp_path / "m.pt"
    run = rescore("train", "--parallel", *sides, "-o", model, *TINY, "--subwords", "bpe", "--subword-size", size)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"Error: {sides[0]}: ") and re.search(said, last), last
    assert sorted(path.name for path in tmp_path.iterdir()) == ["train.en.gz", "train.fr"]  # nothing written


@pytest.mark.parametrize("bad, said", [
    (b"", "7: empty target sentence (its source line is"),
    (b" \xc2\xa0 ", "7: empty target sentence (only whitespace: '\\xa0') (its source line is"),  # a no-break space
    (b"au \xff commencement", "7: the target sentence is not UTF-8 (byte 0xFF at byte 4): subword models segment "
                              "UTF-8 text"),
])
def test_a_bad_corpus_line_is_named_or_rejected(tmp_path, sides, bad, said):
    target = tmp_path / "bad.fr"
    lines = [line.encode("utf-8") for line in _lines(sides[1])]
    lines[6] = bad
    target.write_bytes(b"\n".join(lines) + b"\n")
    model = tmp_path / "m.pt"
    run = rescore("train", "--parallel", sides[0], target, "-o", model, *TINY, *SUBWORDS, "--max-updates", "2")
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith(f"Error: {target}:{said}")
    assert not model.exists()
    rejects = tmp_path / "rejects.txt"
    run = rescore("train", "--parallel", sides[0], target, "-o", model, *TINY, *SUBWORDS, "--max-updates", "2",
                  "--reject", rejects)
    assert run.returncode == 0, run.stderr
    assert rejects.read_bytes() == b"7\t" + _lines(sides[0])[6].encode("utf-8") + b"\t" + bad.strip() + b"\n"
    assert "trained on 179 pairs (20 held out" in run.stderr  # the 199 good ones


def test_a_validation_line_that_cannot_be_segmented_is_named(tmp_path, sides):
    """--valid-src/--valid-tgt are read through the subword models too: a line that is not UTF-8
    stops the run before training, naming the file and line; no model is written."""
    dev = tmp_path / "dev.en", tmp_path / "dev.fr"
    dev[0].write_bytes(b"in the beginning\nand god said\n")
    dev[1].write_bytes(b"au commencement\net dieu \xff dit\n")
    model = tmp_path / "m.pt"
    run = rescore("train", "--parallel", *sides, "-o", model, "--preset", "tiny", "--seed", "3", *SUBWORDS,
                  "--max-updates", "2", "--valid-src", dev[0], "--valid-tgt", dev[1])
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1] == (
        f"Error: {dev[1]}:2: the target sentence is not UTF-8 (byte 0xFF at byte 9): subword models segment UTF-8 "
        f"text (the validation set, --valid-src/--valid-tgt)")
    assert not model.exists()


def test_a_phrase_table_model_reads_pieces_learned_on_the_table_and_scores_the_table(tmp_path):
    """--subwords on a table: each side's subword model is learned on the table's phrases, the
    model reads pieces (no shortlist, no [UNK]), and `rescore score` scores every line with it."""
    table = first_lines(EXAMPLE_TABLE, 400, tmp_path / "t.gz")
    model = tmp_path / "pieces.pt"
    run = rescore("train", table, "-o", model, *TINY, "--max-updates", "4", *SUBWORDS)
    assert run.returncode == 0, run.stderr
    assert f"subwords (bpe) learned on phrase table t.gz: {SIZE} source, {SIZE} target pieces" in run.stderr
    bundle = load_model(model)
    assert bundle.subwords is not None and len(bundle.subwords.target.pieces) == int(SIZE)
    assert bundle.tgt_vocab.tokens[3:] == bundle.subwords.target.pieces[1:]  # the pieces are the vocabulary
    phrases = [line.split(" ||| ")[1] for line in gzip.open(table, "rt", encoding="utf-8")]
    pieces = [bundle.subwords.target.segment(phrase) for phrase in phrases[:20]]
    assert all(pieces) and any(len(split) > len(phrase.split()) for split, phrase in zip(pieces, phrases))
    scored = tmp_path / "scored.gz"
    run = rescore("score", table, "--model", model, "--per-word", "--score-format", "log", "-o", scored)
    assert run.returncode == 0, run.stderr
    lines = gzip.open(scored, "rt", encoding="utf-8").read().splitlines()
    assert len(lines) == 400
    checked = 0
    for line in lines:  # --per-word divides by the target's words, not by its pieces
        fields = line.split(" ||| ")
        log_p, per_word = map(float, fields[2].split()[-2:])
        if log_p > -100:  # the log format's floor
            assert log_p < 0 and per_word == pytest.approx(log_p / len(fields[1].split()), rel=1e-5)
            checked += 1
    assert checked > 100


def test_a_table_line_that_is_not_utf8_is_named_or_rejected_with_subwords(tmp_path):
    good = gzip.open(EXAMPLE_TABLE, "rb").read().splitlines(keepends=True)[:300]
    bad = b"caf\xe9 ||| caf\xc3\xa9 ||| 0.5 0.5 0.5 0.5 ||| 0-0 ||| 1 1 1\n"
    table = tmp_path / "t.gz"
    table.write_bytes(gzip.compress(b"".join(good[:5] + [bad] + good[5:])))
    args = ["train", table, "-o", tmp_path / "m.pt", *TINY, "--max-updates", "2", *SUBWORDS]
    run = rescore(*args)
    assert run.returncode == 1 and run.stderr.strip().splitlines()[-1] == (
        f"Error: {table}:6: not UTF-8 (byte 0xE9 at byte 4 of the line): subword models segment UTF-8 text")
    assert not (tmp_path / "m.pt").exists()
    run = rescore(*args, "--reject", tmp_path / "rejects.txt")
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "rejects.txt").read_bytes() == bad
    assert rescore("train", table, "-o", tmp_path / "w.pt", *TINY, "--max-updates", "2").returncode == 0  # words
