"""luong against Luong et al. (2015) as the notes write it: stacked decoder, attention, h~_t,
input feeding."""

import numpy as np
import pytest
import torch

from rescorer.data.vocabulary import PAD_ID
from rescorer.models import ModelSettings, build_model
from tests.equations import cell_step, embed, linear, log_softmax, numpy_of, randomize, softmax

SRC, SRC_LENGTHS = torch.tensor([[3, 4, 5], [6, 7, PAD_ID]]), torch.tensor([3, 2])
TGT, TGT_LENGTHS = torch.tensor([[7, 8, 9], [9, 8, 7]]), torch.tensor([3, 3])


def tiny(seed=3, **settings):
    config = ModelSettings.make("luong", "tiny", **settings).config(11, 13)
    config = config.replace(embed_dim=6, embed_rank=4, hidden_size=5, output_rank=4)
    return randomize(build_model(config).double().eval(), seed=seed)


def steps_by_hand(model, row):
    """log p(y_t | y_<t, x) and a_t for t = 1..3 of pair `row` (annotations from the encoder)."""
    config, H, length = model.config, model.config.hidden_size, int(SRC_LENGTHS[row])
    with torch.no_grad():
        encoded = model.encoder(model.src_embed(SRC), SRC_LENGTHS)
    annotations = numpy_of(encoded.annotations[row, :length])
    # Decoder layer l starts from encoder layer l's final state (directions summed), or 0.
    states = [sum(numpy_of(s[row]) for s in encoded.final_states[layer]) if layer < config.encoder_layers
              else np.zeros(model.decoder[layer].state_size) for layer in range(config.decoder_layers)]
    prev, feed, results = np.zeros(config.embed_dim), np.zeros(H), []  # e(y_0) = 0, h~_0 = 0
    for t, word in enumerate(numpy_of(TGT[row]).astype(int)):
        x = np.concatenate([prev, feed]) if config.input_feeding else prev
        for layer, cell in enumerate(model.decoder):
            states[layer] = cell_step(cell, x, states[layer])
            x = states[layer][:H]
        h = x  # the top layer's h_t
        W_a = numpy_of(model.attention.score.key.weight)
        scores = np.array([h @ (W_a @ h_s) for h_s in annotations])  # general: h_t^T W_a h_s
        window = range(length)
        if config.attention == "local-m":  # p_t = t, positions |s - p_t| <= D
            window = [s for s in range(length) if abs(s - min(t, length - 1)) <= config.attention_window]
        alpha = np.zeros(length)
        alpha[list(window)] = softmax(scores[list(window)])
        c = alpha @ annotations
        attentional = np.tanh(numpy_of(model.combine.weight) @ np.concatenate([c, h]))  # h~ = tanh(W_c [c; h])
        results.append((log_softmax(linear(model.output_left, linear(model.output_right, attentional))), alpha))
        feed, prev = attentional, embed(model.tgt_embed, word)
    return results


@pytest.mark.parametrize("settings", [dict(), dict(cell="gru"), dict(input_feeding=False),
                                      dict(attention="local-m"), dict(bidirectional=True, encoder_layers=2),
                                      dict(cell="gru", encoder_layers=3, reverse_source=True)])
def test_three_steps_equal_the_equations(settings):
    model = tiny(**settings)
    got, prev = [], torch.tensor([PAD_ID, PAD_ID])
    with torch.no_grad():
        state = model.start(SRC, SRC_LENGTHS)
        for t in range(3):
            log_probs, state, attention = model.step(state, prev)
            got.append((numpy_of(log_probs), numpy_of(attention)))
            prev = TGT[:, t]
    for row in range(2):
        for (log_probs, attention), (want, alpha) in zip(got, steps_by_hand(model, row)):
            np.testing.assert_allclose(log_probs[row], want, atol=1e-12)
            np.testing.assert_allclose(attention[row, :len(alpha)], alpha, atol=1e-12)
            assert (attention[row, len(alpha):] == 0).all()


def test_input_feeding_changes_the_result_against_the_same_weights_without_it():
    fed = tiny(input_feeding=True)
    plain = tiny(input_feeding=False)
    weights = fed.state_dict()
    E = fed.config.embed_dim
    weights["decoder.0.input_proj.weight"] = weights["decoder.0.input_proj.weight"][:, :E]
    plain.load_state_dict(weights)  # every weight the same, but the columns that read h~_{t-1}
    with torch.no_grad():
        scores_fed = fed(SRC, SRC_LENGTHS, TGT, TGT_LENGTHS)
        scores_plain = plain(SRC, SRC_LENGTHS, TGT, TGT_LENGTHS)
        assert (scores_fed - scores_plain).abs().min() > 1e-3
        fed.decoder[0].input_proj.weight[:, E:] = 0  # feeding h~_{t-1} through zeros: no feeding
        torch.testing.assert_close(fed(SRC, SRC_LENGTHS, TGT, TGT_LENGTHS), scores_plain)


def test_keys_once_per_pair_and_attention_for_all_steps_at_once_without_feeding():
    model = tiny(input_feeding=False)
    calls = {"key": [], "combine": []}
    model.attention.score.key.register_forward_hook(lambda m, i, o: calls["key"].append(tuple(i[0].shape)))
    model.combine.register_forward_hook(lambda m, i, o: calls["combine"].append(tuple(i[0].shape)))
    with torch.no_grad():
        model(SRC, SRC_LENGTHS, TGT, TGT_LENGTHS)
    # W_c once over the 8 real positions (3 words and [EOS] per pair), not step by step
    assert calls == {"key": [(2, 3, 5)], "combine": [(8, 10)]}
