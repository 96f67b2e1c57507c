"""What every architecture must do, whatever its settings: step-by-step decoding gives the
teacher-forced score, probabilities sum to 1, attention is a distribution over real source
positions, scores do not depend on batching, and e(y_0) = 0."""

import numpy as np
import pytest
import torch

from rescorer.data.vocabulary import EOS_ID, PAD_ID
from rescorer.models import ModelSettings, build_model
from rescorer.models.precision import autocast
from rescorer.scoring.batch_scoring import score_encoded
from tests.equations import randomize

VARIANTS = [
    ("cho2014", {}), ("cho2014", {"cell": "lstm"}), ("cho2014", {"reset_after": True}),
    ("cho2014", {"bidirectional": True, "encoder_layers": 2, "reverse_source": True}),
    ("rnnsearch", {}), ("rnnsearch", {"cell": "lstm", "encoder_layers": 2}),
    ("luong", {}), ("luong", {"cell": "gru"}), ("luong", {"attention": "local-m"}),
    ("luong", {"attention": "local-p", "attention_score": "concat"}),
    ("luong", {"attention": "local-p", "attention_score": "dot", "input_feeding": False}),
    ("luong", {"bidirectional": True, "attention_score": "concat", "input_feeding": False}),
    ("rnnsearch", {"dropout": 0.3}), ("transformer", {}),
    ("transformer", {"tied_embeddings": False, "encoder_layers": 1, "decoder_layers": 3, "attention_heads": 4}),
    ("transformer", {"dropout": 0.2}),
    ("cho2014", {"layer_norm": True, "encoder_layers": 2, "bidirectional": True}),
    ("rnnsearch", {"layer_norm": True, "dropout": 0.3}), ("luong", {"layer_norm": True}),
    ("luong", {"layer_norm": True, "input_feeding": False, "cell": "gru"}),
]
IDS = [arch + "".join(f"-{k}={v}" for k, v in settings.items()) for arch, settings in VARIANTS]
SRC_VOCAB, TGT_VOCAB = 30, 40


def make(arch, settings, dtype=torch.float32, std=0.3):
    config = ModelSettings.make(arch, "tiny", **settings).config(SRC_VOCAB, TGT_VOCAB)
    return randomize(build_model(config).to(dtype).eval(), std=std, seed=11)


def batch(seed=0):
    """Four pairs of different lengths, padded; targets without [EOS]."""
    generator = torch.Generator().manual_seed(seed)
    src_lengths, tgt_lengths = torch.tensor([5, 2, 1, 4]), torch.tensor([1, 6, 3, 2])
    src = torch.randint(3, SRC_VOCAB, (4, 5), generator=generator)
    tgt = torch.randint(3, TGT_VOCAB, (4, 6), generator=generator)
    src[torch.arange(5) >= src_lengths.unsqueeze(1)] = PAD_ID
    tgt[torch.arange(6) >= tgt_lengths.unsqueeze(1)] = PAD_ID
    return src, src_lengths, tgt, tgt_lengths


def decode_gold(model, src, src_lengths, tgt, tgt_lengths):
    """Sum of the step-by-step log p of the gold words and [EOS]; every step's distribution and
    attention."""
    state = model.start(src, src_lengths)
    prev = torch.full((src.size(0),), PAD_ID)
    total = torch.zeros(src.size(0), dtype=torch.float64)
    steps = []
    for t in range(tgt.size(1) + 1):
        log_probs, state, attention = model.step(state, prev)
        gold = tgt[:, t] if t < tgt.size(1) else torch.full_like(prev, EOS_ID)
        gold = torch.where(tgt_lengths == t, torch.full_like(gold, EOS_ID), gold)
        picked = log_probs.gather(1, gold.unsqueeze(1)).squeeze(1).double()
        total += torch.where(t <= tgt_lengths, picked, torch.zeros_like(picked))
        steps.append((log_probs, attention))
        prev = gold
    return total, steps


@pytest.mark.parametrize("dtype, tolerance", [(torch.float64, 1e-9), (torch.float32, 1e-4)])
@pytest.mark.parametrize("arch, settings", VARIANTS, ids=IDS)
def test_step_by_step_decoding_gives_the_teacher_forced_score(arch, settings, dtype, tolerance):
    model = make(arch, settings, dtype)
    inputs = batch()
    with torch.no_grad():
        teacher_forced = model(*inputs).double()
        stepwise, _ = decode_gold(model, *inputs)
    np.testing.assert_allclose(stepwise.numpy(), teacher_forced.numpy(), atol=tolerance, rtol=0)
    assert (teacher_forced < -1).all()  # real scores, not zeros


@pytest.mark.parametrize("arch, settings", VARIANTS, ids=IDS)
def test_distributions_sum_to_one_and_attention_covers_real_positions_only(arch, settings):
    model = make(arch, settings, torch.float64)
    src, src_lengths, tgt, tgt_lengths = batch(1)
    with torch.no_grad():
        _, steps = decode_gold(model, src, src_lengths, tgt, tgt_lengths)
    padding = torch.arange(src.size(1)) >= src_lengths.unsqueeze(1)
    for log_probs, attention in steps:
        assert log_probs.shape == (4, TGT_VOCAB)
        torch.testing.assert_close(log_probs.exp().sum(-1), torch.ones(4, dtype=torch.float64))
        if arch == "cho2014":
            assert attention is None
            continue
        assert attention.shape == src.shape and (attention >= 0).all()
        assert (attention[padding] == 0).all()
        if settings.get("attention") == "local-p":  # the Gaussian leaves less than 1
            assert (attention.sum(-1) <= 1 + 1e-12).all() and (attention.sum(-1) > 0).all()
        else:
            torch.testing.assert_close(attention.sum(-1), torch.ones(4, dtype=torch.float64))


@pytest.mark.parametrize("arch, settings", VARIANTS, ids=IDS)
def test_scores_do_not_depend_on_batching(arch, settings):
    model = make(arch, settings)
    generator = np.random.default_rng(2)
    src_seqs = [list(generator.integers(1, SRC_VOCAB, generator.integers(1, 8))) for _ in range(60)]
    tgt_seqs = [list(generator.integers(1, TGT_VOCAB, generator.integers(1, 8))) for _ in range(60)]
    reference = score_encoded(model, src_seqs, tgt_seqs, token_budget=100_000)
    for budget in (1, 40, 700):
        np.testing.assert_allclose(score_encoded(model, src_seqs, tgt_seqs, token_budget=budget), reference,
                                   atol=1e-4, rtol=0)
    chunked = np.concatenate([score_encoded(model, src_seqs[i:i + 17], tgt_seqs[i:i + 17])
                              for i in range(0, 60, 17)])
    np.testing.assert_allclose(chunked, reference, atol=1e-4, rtol=0)


@pytest.mark.parametrize("arch, settings", VARIANTS[::3], ids=IDS[::3])
def test_first_decoder_input_is_the_zero_vector(arch, settings):
    if settings.get("tied_embeddings", arch == "transformer"):  # [PAD]'s row is also an output logit's
        settings = {**settings, "tied_embeddings": False}
    model = make(arch, settings)
    src, src_lengths, tgt, tgt_lengths = batch()
    with torch.no_grad():
        before = model(src, src_lengths, tgt, tgt_lengths)
        model.tgt_embed.table.weight[PAD_ID].normal_()  # whatever y_0's id points at
        torch.testing.assert_close(model(src, src_lengths, tgt, tgt_lengths), before)


@pytest.mark.parametrize("arch, settings", VARIANTS, ids=IDS)
def test_selected_states_decode_as_the_rows_they_came_from(arch, settings):
    model = make(arch, settings, torch.float64)
    src, src_lengths, tgt, _ = batch()
    index = torch.tensor([2, 0, 0, 3])  # beam search keeps, reorders and repeats hypotheses
    with torch.no_grad():
        state = model.start(src, src_lengths)
        _, state, _ = model.step(state, tgt[:, 0])
        whole, _, whole_attention = model.step(state, tgt[:, 0])
        picked, _, picked_attention = model.step(state.select(index), tgt[index, 0])
    torch.testing.assert_close(picked, whole[index])
    if whole_attention is not None:
        torch.testing.assert_close(picked_attention, whole_attention[index])


@pytest.mark.parametrize("arch, settings", VARIANTS[::2], ids=IDS[::2])
def test_bf16_autocast_runs_and_stays_close(arch, settings):
    model = make(arch, settings, std=0.1)
    inputs = batch()
    with torch.no_grad():
        fp32 = model(*inputs)
        with autocast(torch.device("cpu"), "bf16"):
            bf16 = model(*inputs)
    assert bf16.dtype == torch.float32 and torch.isfinite(bf16).all()
    assert (bf16 - fp32).abs().mean() < 0.2


DROPOUT = [("cho2014", {"dropout": 0.3}), ("rnnsearch", {"dropout": 0.3, "encoder_layers": 2}),
           ("luong", {"dropout": 0.3}), ("luong", {"dropout": 0.3, "input_feeding": False}),
           ("transformer", {"dropout": 0.3})]


@pytest.mark.parametrize("arch, settings", DROPOUT, ids=[arch + "".join(f"-{k}={v}" for k, v in s.items())
                                                          for arch, s in DROPOUT])
def test_dropout_acts_in_training_only(arch, settings):
    model = make(arch, settings, torch.float64)
    inputs = batch()
    with torch.no_grad():
        scored = model(*inputs)
        torch.manual_seed(0)
        again = model(*inputs)
        stepwise, _ = decode_gold(model, *inputs)
        model.train()
        trained = [model(*inputs) for _ in range(2)]
        model.eval()
        after = model(*inputs)
    assert torch.equal(scored, again) and torch.equal(scored, after)  # eval: no dropout, exactly
    np.testing.assert_allclose(stepwise.numpy(), scored.numpy(), atol=1e-9, rtol=0)
    assert not torch.equal(trained[0], scored) and not torch.equal(trained[0], trained[1])


@pytest.mark.parametrize("arch", ["cho2014", "rnnsearch", "luong", "transformer"])
def test_without_dropout_training_draws_no_random_numbers(arch):
    """Rate 0 (every older model file's) is the model as before: train mode changes nothing and
    leaves the random generator where it was, so earlier training runs repeat."""
    model = make(arch, {})
    inputs = batch()
    with torch.no_grad():
        scored = model(*inputs)
        model.train()
        before = torch.get_rng_state()
        trained = model(*inputs)
        assert torch.equal(torch.get_rng_state(), before)
    torch.testing.assert_close(trained, scored, atol=1e-5, rtol=0)


@pytest.mark.parametrize("arch", ["cho2014", "rnnsearch", "luong"])
def test_layer_norm_normalizes_the_recurrent_layers_outputs(arch):
    model = make(arch, {"layer_norm": True, "encoder_layers": 2})
    with torch.no_grad():  # gains 1, biases 0: outputs standardized
        for norm in [*model.encoder.norms, *model.decoder_norms]:
            norm.weight.fill_(1.0)
            norm.bias.zero_()
    norms, seen, ran = [*model.encoder.norms, *model.decoder_norms], [], set()

    def record(module, inputs, output):
        seen.append((inputs[0], output))
        ran.add(id(module))

    for norm in norms:
        norm.register_forward_hook(record)
    src, src_lengths, tgt, tgt_lengths = batch()
    with torch.no_grad():
        model(src, src_lengths, tgt, tgt_lengths)
    assert ran == {id(norm) for norm in norms}  # each layer's norm ran (the decoder's at every step)
    for before, output in seen:  # (h - mean) / sqrt(variance + 1e-5) over each output vector
        mean, variance = before.mean(-1, keepdim=True), before.var(-1, unbiased=False, keepdim=True)
        torch.testing.assert_close(output, (before - mean) / torch.sqrt(variance + 1e-5), atol=1e-5, rtol=1e-5)
    plain = make(arch, {"encoder_layers": 2})
    assert not any("norm" in name for name in plain.state_dict())  # older files' weights, as before


@pytest.mark.parametrize("arch, settings", VARIANTS[::2], ids=IDS[::2])
def test_label_smoothed_objective_is_the_formula_on_the_steps_distributions(arch, settings):
    """forward(smoothing=eps) per pair = sum over its positions of (1 - eps) log p(gold) + eps *
    the mean over the vocabulary of log p(w), with log p from the step-by-step distributions."""
    model = make(arch, settings, torch.float64)
    src, src_lengths, tgt, tgt_lengths = batch()
    eps = 0.2
    with torch.no_grad():
        smoothed = model(src, src_lengths, tgt, tgt_lengths, smoothing=eps)
        plain, steps = decode_gold(model, src, src_lengths, tgt, tgt_lengths)
    uniform = torch.stack([log_probs.mean(dim=1) for log_probs, _ in steps], dim=1)  # (batch, steps)
    real = torch.arange(len(steps)).unsqueeze(0) <= tgt_lengths.unsqueeze(1)
    want = (1 - eps) * plain + eps * (uniform * real).sum(dim=1)
    np.testing.assert_allclose(smoothed.numpy(), want.numpy(), atol=1e-9, rtol=0)
    assert ((smoothed - plain).abs() > 1e-3).all()  # the smoothing term counts
    with torch.no_grad():
        np.testing.assert_allclose(model(src, src_lengths, tgt, tgt_lengths, smoothing=0.0).numpy(),
                                   plain.numpy(), atol=1e-9, rtol=0)
