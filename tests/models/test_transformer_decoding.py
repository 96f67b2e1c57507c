"""The Transformer's cached step-by-step decoding (keys and values projected once, kept in the
state) computes what torch's own decoder layers compute on the whole prefix with nothing cached:
the same features and the same attention to the source, over a padded source batch, after beam
search reorders, repeats and drops rows, and without calling nn.MultiheadAttention at all (every
projection of the earlier positions and of the source would be recomputed)."""

import copy

import numpy as np
import pytest
import torch
from torch import nn

from rescorer.data.vocabulary import PAD_ID
from rescorer.models.embeddings import previous_word_embeddings
from rescorer.models.transformer import causal_mask
from rescorer.models.precision import autocast
from tests.models.test_models import TGT_VOCAB, batch, decode_gold, make

SETTINGS = [{}, {"tied_embeddings": False, "encoder_layers": 1, "decoder_layers": 3, "attention_heads": 4},
            {"dropout": 0.2}]
IDS = ["tiny", "3-layers-4-heads", "dropout"]


def uncached(model, src, src_lengths, prefixes):
    """Features and last-layer attention (averaged over heads) at the last position of
    `prefixes` (rows, t): y_0 .. y_{t-1}, through nn.TransformerDecoderLayer's own forward over
    the whole prefix, the source encoded again."""
    memory, padding = model.encode(src, src_lengths)
    x = model.positioned(previous_word_embeddings(model.tgt_embed, prefixes))
    last = model.decoder_layers[-1].multihead_attn
    seen = {}
    hook = last.register_forward_pre_hook(lambda module, args, kwargs: seen.update(args=args), with_kwargs=True)
    try:
        for layer in model.decoder_layers:
            x = layer(x, memory, tgt_mask=causal_mask(x.size(1), x.device), memory_key_padding_mask=padding)
    finally:
        hook.remove()
    _, weights = last(*seen["args"], key_padding_mask=padding, need_weights=True)
    return model.decoder_norm(x[:, -1]), weights[:, -1]


def count_attention_calls(model):
    """A counter of the calls to the decoder's nn.MultiheadAttention modules, and its hooks."""
    calls = []
    hooks = [module.register_forward_hook(lambda *_: calls.append(1))
             for layer in model.decoder_layers for module in (layer.self_attn, layer.multihead_attn)]
    return calls, hooks


@pytest.mark.parametrize("settings", SETTINGS, ids=IDS)
def test_cached_steps_equal_the_uncached_layers_through_beam_reordering(settings):
    model = make("transformer", settings)
    src, src_lengths, tgt, _ = batch(3)  # sources of 5, 2, 1 and 4 words, padded to 5
    generator = torch.Generator().manual_seed(5)
    reorders = {2: torch.tensor([2, 0, 0, 3, 1]), 4: torch.tensor([4, 1, 2])}  # repeat, reorder, drop
    prefixes = torch.full((4, 1), PAD_ID)
    calls, hooks = count_attention_calls(model)
    with torch.no_grad():
        state = model.start(src, src_lengths)
        for step in range(6):
            if step in reorders:
                index = reorders[step]
                state, prefixes, src, src_lengths = (state.select(index), prefixes[index], src[index],
                                                     src_lengths[index])
            features, state, attention = model.step_features(state, prefixes[:, -1])
            assert not calls
            for hook in hooks:
                hook.remove()
            expected_features, expected_attention = uncached(model, src, src_lengths, prefixes)
            calls, hooks = count_attention_calls(model)
            torch.testing.assert_close(features, expected_features, atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(attention, expected_attention, atol=1e-6, rtol=1e-5)
            assert (attention[torch.arange(src.size(1)) >= src_lengths.unsqueeze(1)] == 0).all()
            words = torch.randint(3, TGT_VOCAB, (src.size(0), 1), generator=generator)
            prefixes = torch.cat([prefixes, words], dim=1)
    for hook in hooks:
        hook.remove()
    assert state.position == 6 and state["self_keys0"].size(2) == 6


def test_steps_under_bf16_autocast_cache_bf16_and_stay_close():
    model = make("transformer", {}, std=0.1)
    inputs = batch()
    with torch.no_grad():
        fp32 = model(*inputs)
        with autocast(torch.device("cpu"), "bf16"):
            stepwise, steps = decode_gold(model, *inputs)
            state = model.start(*inputs[:2])
            _, state, _ = model.step(state.select(torch.tensor([3, 3, 0])), torch.full((3,), PAD_ID))
    assert state["self_keys0"].dtype == torch.bfloat16 and state["source_keys1"].dtype == torch.bfloat16
    assert torch.isfinite(stepwise).all()
    assert (stepwise - fp32.double()).abs().mean() < 0.2
    for log_probs, attention in steps:
        assert log_probs.dtype == torch.float32
        torch.testing.assert_close(attention.float().sum(-1), torch.ones(4), atol=2e-2, rtol=0)


def test_steps_of_an_int8_model_give_its_teacher_forced_score():
    pytest.importorskip("torchao")
    from rescorer.models.quantization import quantize_int8

    model = quantize_int8(copy.deepcopy(make("transformer", {}, std=0.1)))
    assert type(model.decoder_layers[0].linear1.weight) is not nn.Parameter
    inputs = batch()
    with torch.no_grad():
        teacher_forced = model(*inputs).double()
        stepwise, _ = decode_gold(model, *inputs)
    np.testing.assert_allclose(stepwise.numpy(), teacher_forced.numpy(), atol=1e-3, rtol=0)
