"""The training recipe's options (issue 30): label smoothing, weight decay, the learning-rate
schedule, a held-out set of whole sentences and the average of the best checkpoints."""


import copy
import math
import re

import pytest
import torch

from rescorer.data.pair_sources import ParallelCorpusPairs
from rescorer.io.file_names import checkpoint_path_for
from rescorer.models.model_files import load_model, read_model_file
from rescorer.records import SettingError
from rescorer.training.pipeline import PairEncoding, encode_valid_set, train_on_table
from rescorer.scoring.batch_scoring import score_pairs
from rescorer.training.trainer import Trainer, TrainSettings, batch_tensors, make_optimizer
from tests.equations import randomize
from tests.helpers import gz_lines, rescore
from tests.training.trainers import tiny_trainer
from tests.models.test_models import decode_gold

CPU = torch.device("cpu")
RANDOM_PAIRS = dict(batch_size=8, batch_tokens=None)  # the full softmax, no warm-up by default


def make_trainer(example_cache, tmp_path, arch="cho2014", **settings):
    return tiny_trainer(example_cache, tmp_path, arch, valid_pairs=100, **settings)


# -- label smoothing ---------------------------------------------------------------------------
def test_the_label_smoothed_loss_is_the_formula(example_cache, tmp_path):
    """One update's loss: the mean over the batch's pairs of the sum over their positions of
    (1 - eps) * -log p(gold) + eps * the mean over the shortlist of -log p(w), with log p from
    the model's step-by-step distributions."""
    eps = 0.1
    trainer = make_trainer(example_cache, tmp_path, label_smoothing=eps, **RANDOM_PAIRS)
    randomize(trainer.model, std=0.3, seed=1)  # far from uniform, as a trained model is
    src, src_lengths, tgt, tgt_lengths = batch_tensors(trainer.cache, trainer.schedule.batch(0), CPU)
    with torch.no_grad():
        plain, steps = decode_gold(trainer.model.eval(), src, src_lengths, tgt, tgt_lengths)
    uniform = torch.stack([log_probs.double().mean(dim=1) for log_probs, _ in steps], dim=1)
    real = torch.arange(len(steps)).unsqueeze(0) <= tgt_lengths.unsqueeze(1)
    nll, smooth = -plain, -(uniform * real).sum(dim=1)
    want = float(((1 - eps) * nll + eps * smooth).mean())
    trainer.model.train()
    assert trainer.step() == pytest.approx(want, rel=1e-5)
    assert abs(want - float(nll.mean())) > 0.1  # the smoothing term counts


def test_held_out_perplexity_stays_the_plain_one(example_cache, tmp_path):
    smoothed = make_trainer(example_cache, tmp_path, label_smoothing=0.3, **RANDOM_PAIRS)
    plain = make_trainer(example_cache, tmp_path, **RANDOM_PAIRS)
    assert smoothed.validation_perplexity() == plain.validation_perplexity()


def test_label_smoothing_takes_the_whole_softmax():
    assert TrainSettings(label_smoothing=0.1).resolved().sampled_softmax == 0  # token batches' 2048 otherwise
    assert TrainSettings().resolved().sampled_softmax == 2048
    with pytest.raises(SettingError, match=r"^--label-smoothing 0.1 is defined on the whole softmax: drop "
                                           r"--sampled-softmax 512 \(or give 0\)$"):
        TrainSettings(label_smoothing=0.1, sampled_softmax=512)
    with pytest.raises(SettingError, match=r"--label-smoothing 1.0: expected < 1"):
        TrainSettings(label_smoothing=1.0)


# -- weight decay ------------------------------------------------------------------------------
def _zero_gradient_step(optimizer_name, weight_decay, learning_rate):
    torch.manual_seed(0)
    model = torch.nn.Linear(5, 3)
    before = [p.detach().clone() for p in model.parameters()]
    optimizer = make_optimizer(model, TrainSettings(optimizer=optimizer_name, weight_decay=weight_decay,
                                                    learning_rate=learning_rate, **RANDOM_PAIRS))
    for parameter in model.parameters():
        parameter.grad = torch.zeros_like(parameter)
    optimizer.step()
    return before, [p.detach() for p in model.parameters()]


def test_adam_decays_the_weights_decoupled():
    """With a zero gradient Adam moves nothing, so all that changes is AdamW's decay: every
    weight is multiplied by 1 - lr * W."""
    before, after = _zero_gradient_step("adam", 0.01, 0.1)
    for old, new in zip(before, after):
        torch.testing.assert_close(new, old * (1 - 0.1 * 0.01), rtol=1e-7, atol=0)
        assert not torch.equal(new, old)
    before, after = _zero_gradient_step("adam", 0.0, 0.1)
    assert all(torch.equal(old, new) for old, new in zip(before, after))


def test_adadelta_adds_the_decay_to_the_gradient():
    """torch's Adadelta weight_decay: g = W * w, then Adadelta's first step (rho 0.95, eps 1e-6)
    w -= lr * sqrt(eps) / sqrt((1 - rho) g^2 + eps) * g."""
    decay, rate, rho, eps = 0.5, 1.0, 0.95, 1e-6
    before, after = _zero_gradient_step("adadelta", decay, rate)
    for old, new in zip(before, after):
        gradient = decay * old.double()
        step = math.sqrt(eps) / torch.sqrt((1 - rho) * gradient ** 2 + eps) * gradient
        torch.testing.assert_close(new.double(), old.double() - rate * step, rtol=0, atol=1e-7)
        assert (new.abs() < old.abs()).all()


# -- learning-rate schedule --------------------------------------------------------------------
def test_inverse_sqrt_follows_the_warm_up_then_decays(example_cache, tmp_path):
    """lr(u) = peak * u / warmup over the warm-up, then peak * sqrt(warmup / u) (u counted from 1),
    times the plateau decay so far."""
    trainer = make_trainer(example_cache, tmp_path, warmup_updates=4, learning_rate=0.01,
                           lr_schedule="inverse-sqrt", **RANDOM_PAIRS)
    seen = []
    for update in range(1, 10):
        if update == 8:
            trainer.state.lr_scale = 0.5  # as two validations without a new best at --lr-decay 0.7071
        trainer.step()
        seen.append(trainer.optimizer.param_groups[0]["lr"])
    want = [0.01 * u / 4 for u in (1, 2, 3)] + [0.01 * math.sqrt(4 / u) for u in range(4, 10)]
    want[-2:] = [rate * 0.5 for rate in want[-2:]]
    assert seen == pytest.approx(want, rel=1e-12)


def test_inverse_sqrt_needs_a_warm_up():
    with pytest.raises(SettingError, match=r"^--lr-schedule inverse-sqrt decays from the end of the warm-up: "
                                           r"give --warmup-updates N > 0$"):
        TrainSettings(lr_schedule="inverse-sqrt", batch_size=64, batch_tokens=None)  # no warm-up by default
    assert TrainSettings(lr_schedule="inverse-sqrt").resolved().warmup_updates == 100  # token batches' default


def test_a_resumed_inverse_sqrt_run_equals_an_uninterrupted_one(example_table, tmp_path):
    """Stopped at update 10 and resumed: the same weights after 20 updates as one run, with the
    schedule, the plateau decay, weight decay and label smoothing all in play (at 6e-3, whose
    held-out figure stalls within these 20 updates, so the decay acts)."""
    settings = dict(valid_pairs=200, valid_every=5, checkpoint_every=10, seed=2, warmup_updates=4,
                    learning_rate=6e-3,
                    lr_schedule="inverse-sqrt", lr_decay=0.5, weight_decay=0.01, label_smoothing=0.1,
                    batch_tokens=500)
    straight, resumed = tmp_path / "straight.pt", tmp_path / "resumed.pt"
    train_on_table(example_table, straight, preset="tiny", settings=TrainSettings(max_updates=20, **settings))
    train_on_table(example_table, resumed, preset="tiny", settings=TrainSettings(max_updates=10, **settings))
    train_on_table(example_table, resumed, preset="tiny",
                   settings=TrainSettings(max_updates=20, resume=True, **settings))
    a, b = (read_model_file(checkpoint_path_for(path)) for path in (straight, resumed))
    states = [{k: v for k, v in f["training"]["state"].items() if k != "seconds"} for f in (a, b)]
    assert states[0] == states[1] and states[0]["updates"] == 20
    assert states[0]["lr_scale"] < 1  # the plateau decay acted too
    for name in a["weights"]:
        assert torch.equal(a["weights"][name], b["weights"][name]), name


# -- the average of the best validations -------------------------------------------------------
def _trained_watching_validations(example_cache, tmp_path, **settings):
    """A trainer after training, and every validation's (perplexity, update, weights) as it saw them."""
    trainer = make_trainer(example_cache, tmp_path, valid_every=5, batch_tokens=500, patience=100, **settings)
    seen = []

    def on_progress(state, ppl):
        if ppl is not None:
            seen.append((ppl, state.updates, copy.deepcopy(trainer.model.state_dict())))

    trainer.on_progress = on_progress
    trainer.train()
    return trainer, seen


def test_average_2_keeps_the_mean_of_the_two_best_validations(example_cache, tmp_path):
    trainer, seen = _trained_watching_validations(example_cache, tmp_path, max_updates=40, average=2)
    assert len(seen) == 8
    best = sorted(seen, key=lambda item: (item[0], item[1]))[:2]
    for name, tensor in trainer.model.state_dict().items():
        want = (best[0][2][name].double() + best[1][2][name].double()) / 2
        torch.testing.assert_close(tensor.double(), want, rtol=0, atol=1e-7)
        assert not torch.equal(tensor, best[0][2][name])  # not the best alone
    state = trainer.bundle.training["state"]  # what the model file records
    assert state["averaged_updates"] == sorted(item[1] for item in best)
    assert state["best_update"] == best[0][1]
    assert state["averaged_valid_ppl"] == pytest.approx(trainer.validation_perplexity(), rel=1e-9)


def test_without_average_the_model_is_the_best_validation(example_cache, tmp_path):
    trainer, seen = _trained_watching_validations(example_cache, tmp_path, max_updates=20)
    best = min(seen, key=lambda item: (item[0], item[1]))
    assert all(torch.equal(tensor, best[2][name]) for name, tensor in trainer.model.state_dict().items())
    assert trainer.bundle.training["state"]["averaged_updates"] == []
    assert "best_checkpoints" not in read_model_file(trainer.checkpoint_path)


def test_a_resumed_run_averages_the_same_checkpoints(example_table, tmp_path):
    """The kept weights travel in the checkpoint: stopped at update 20 and resumed to 40, the
    model file holds the same mean as one run's."""
    settings = dict(valid_every=5, valid_pairs=200, seed=4, batch_tokens=500, patience=100, average=3,
                    checkpoint_every=20)
    straight, resumed = tmp_path / "straight.pt", tmp_path / "resumed.pt"
    train_on_table(example_table, straight, preset="tiny", settings=TrainSettings(max_updates=40, **settings))
    train_on_table(example_table, resumed, preset="tiny", settings=TrainSettings(max_updates=20, **settings))
    assert len(read_model_file(checkpoint_path_for(resumed))["best_checkpoints"]) == 3
    train_on_table(example_table, resumed, preset="tiny",
                   settings=TrainSettings(max_updates=40, resume=True, **settings))
    a, b = read_model_file(straight), read_model_file(resumed)
    assert a["training"]["state"]["averaged_updates"] == b["training"]["state"]["averaged_updates"]
    assert len(a["training"]["state"]["averaged_updates"]) == 3
    for name in a["weights"]:
        assert torch.equal(a["weights"][name], b["weights"][name]), name



# -- a validation set of whole sentences -------------------------------------------------------
def _corpus(tmp_path, name, pairs):
    src, tgt = tmp_path / f"{name}.src", tmp_path / f"{name}.tgt"
    src.write_text("".join(f"{s}\n" for s, _ in pairs))
    tgt.write_text("".join(f"{t}\n" for _, t in pairs))
    return src, tgt


@pytest.fixture()
def corpora(example_table, tmp_path):
    """A parallel corpus of 300 pairs and a validation set of 40 others (the example table's)."""
    pairs = [tuple(field.strip() for field in line.decode().split("|||")[:2]) for line in gz_lines(example_table, 340)]
    return _corpus(tmp_path, "train", pairs[:300]), _corpus(tmp_path, "dev", pairs[300:]), pairs[300:]


def test_a_validation_set_replaces_the_held_out_slice(corpora, tmp_path):
    """Every training pair trains, and the held-out perplexity is that of the validation set's
    sentences under the kept model: exp(-sum log p / (target words + one end each))."""
    train, dev, dev_pairs = corpora
    settings = TrainSettings(valid_src=dev[0], valid_tgt=dev[1], max_updates=20, valid_every=5, batch_tokens=300,
                             seed=2)
    report = train_on_table(ParallelCorpusPairs(*train), tmp_path / "m.pt", preset="tiny", settings=settings)
    assert (report.num_pairs, report.valid_pairs, report.valid_set) == (300, 40, "dev.src, dev.tgt")
    bundle = load_model(tmp_path / "m.pt")
    logp = score_pairs(bundle, dev_pairs, device="cpu", precision="fp32")
    tokens = sum(len(tgt.split()) + 1 for _, tgt in dev_pairs)
    assert report.state.best_valid_ppl == pytest.approx(math.exp(-logp.sum() / tokens), rel=1e-5)


def test_with_a_validation_set_no_training_pair_is_held_out(example_cache, corpora, tmp_path):
    vocabularies, _ = example_cache
    _, dev, _ = corpora
    valid = encode_valid_set(*dev, PairEncoding(vocabularies.src_vocab, vocabularies.tgt_vocab), tmp_path / "valid")
    trainer = make_trainer(example_cache, tmp_path, **RANDOM_PAIRS)
    trainer_with_set = Trainer(trainer.bundle, trainer.cache, trainer.settings, CPU, "fp32", tmp_path / "c",
                               valid_cache=valid)
    assert len(trainer.split.valid) > 50  # the hashed slice of about --valid-pairs 100, by default
    assert len(trainer_with_set.split.valid) == 0 and trainer_with_set.split.num_train == trainer.cache.num_pairs
    assert trainer_with_set.valid_indices.tolist() == list(range(40))


@pytest.mark.parametrize("case, lines, expected", [
    ("an empty line", ["a b", "", "c"], r"dev.tgt:2: empty target sentence \(its source line is 'x'\)"),
    ("a short side", ["a b", "c"], r"dev.tgt:3: the target side ends after 2 lines, but .*dev.src goes on"),
    ("an empty file", [], r"dev.src: the parallel corpus is empty"),
])
def test_a_bad_validation_set_is_one_line_naming_file_and_line(corpora, tmp_path, case, lines, expected):
    train, _, _ = corpora
    src, tgt = tmp_path / "dev.src", tmp_path / "dev.tgt"
    src.write_text("".join("x\n" for _ in (lines or []) + (["y"] if lines else [])))
    tgt.write_text("".join(f"{line}\n" for line in lines))
    run = rescore("train", "--parallel", *train, "-o", tmp_path / "m.pt", "--preset", "tiny", "--max-updates", "2",
                  "--valid-src", src, "--valid-tgt", tgt)
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert re.fullmatch(f"Error: .*{expected}.* \\(the validation set, --valid-src/--valid-tgt\\)", last), last
    assert "Traceback" not in run.stderr and not (tmp_path / "m.pt").exists()


def test_validation_sets_go_with_a_parallel_corpus(example_table, corpora, tmp_path):
    _, dev, _ = corpora
    run = rescore("train", example_table, "-o", tmp_path / "m.pt", "--valid-src", dev[0], "--valid-tgt", dev[1])
    assert run.returncode == 2 and run.stderr.strip().splitlines()[-1] == (
        "Error: --valid-src/--valid-tgt: a validation set of sentences goes with --parallel; a phrase table "
        "validates on a held-out slice of its pairs (--valid-pairs)")
    with pytest.raises(SettingError, match="^--valid-src and --valid-tgt go together"):
        TrainSettings(valid_src=dev[0])


def test_a_resume_asking_for_a_new_recipe_names_the_difference(corpora, tmp_path):
    """The checkpoint's sampled softmax and the asked label smoothing do not go together, but
    what the user asked for is the smoothing: the resume check names it, not --sampled-softmax."""
    train, _, _ = corpora
    model = tmp_path / "m.pt"
    first = rescore("train", "--parallel", *train, "-o", model, "--preset", "tiny", "--max-updates", "2",
                    "--batch-tokens", "300", "--label-smoothing", "0")  # so a sampled softmax
    assert first.returncode == 0, first.stderr
    run = rescore("train", "--parallel", *train, "-o", model, "--resume", "--max-updates", "4",
                  "--label-smoothing", "0.2")
    last = run.stderr.strip().splitlines()[-1]
    assert run.returncode == 1 and last.startswith(
        f"Error: {checkpoint_path_for(model)}: --resume asks for other settings than the checkpoint was trained "
        f"with: label-smoothing 0.0 (checkpoint) vs 0.2 (now). Only "), last
