"""The `sentence` preset: the sizes of small-data sentence NMT (embeddings 512, hidden 1024;
the Transformer d 512, feed-forward 1024, 6 + 6 layers), checked by counting the parameters
those sizes give, layer by layer as each architecture builds them."""

import pytest

from rescorer.models import ModelSettings, build_model
from rescorer.models.base import count_parameters

SRC, TGT = 1000, 1200  # vocabulary sizes, specials included


def gru(inputs: int, hidden: int) -> int:
    """W (3H x I) with biases, U (3H x H) without."""
    return 3 * hidden * inputs + 3 * hidden + 3 * hidden * hidden


def lstm(inputs: int, hidden: int) -> int:
    return 4 * hidden * inputs + 4 * hidden + 4 * hidden * hidden


def deep_output(hidden: int, embed: int, context: int, maxout: int) -> int:
    """O_h (with bias), O_y and O_c, each to 2 * maxout units; then G over the maxout units."""
    return 2 * maxout * (hidden + 1 + embed + context) + TGT * maxout + TGT


E, H, M = 512, 1024, 512
EMBEDDINGS = (SRC + TGT) * E
EXPECTED = {
    # encoder; c = tanh(V h_N); s_0 = tanh(V' c); decoder; C c to the decoder's gates; deep output
    "cho2014": EMBEDDINGS + gru(E, H) + 2 * (H * H + H) + gru(E, H) + 3 * H * H + deep_output(H, E, H, M),
    # bidirectional encoder (annotations 2H); attention W_a s, U_a h, v_a (no biases); s_0 from <-h_1
    "rnnsearch": (EMBEDDINGS + 2 * gru(E, H) + (H * H + 2 * H * H + H) + (H * H + H) + gru(E, H)
                  + 3 * H * 2 * H + deep_output(H, E, 2 * H, M)),
    # 2 + 2 LSTM layers, input feeding (E + H into the first decoder layer), general score W_a,
    # W_c [c; h] without bias, G over H
    "luong": (EMBEDDINGS + lstm(E, H) + lstm(H, H) + lstm(E + H, H) + lstm(H, H) + H * H + 2 * H * H
              + TGT * H + TGT),
}
D, F, LAYERS = 512, 1024, 6
attention = 4 * D * D + 4 * D  # q, k, v and output projections, with biases
feed_forward = 2 * D * F + F + D
EXPECTED["transformer"] = (EMBEDDINGS + LAYERS * (attention + feed_forward + 2 * 2 * D)  # encoder, 2 norms
                           + LAYERS * (2 * attention + feed_forward + 3 * 2 * D)  # decoder, 3 norms
                           + 2 * 2 * D + TGT)  # final norms; the output layer's bias (its weight is e's)


@pytest.mark.parametrize("arch", sorted(EXPECTED))
def test_the_sentence_preset_has_the_parameters_its_sizes_give(arch):
    config = ModelSettings.make(arch, "sentence").config(SRC, TGT)
    assert count_parameters(build_model(config)) == EXPECTED[arch]
    assert config.embed_dim == 512 and config.embed_rank is None and config.output_rank is None
    assert config.hidden_size == (1024 if arch != "transformer" else F)
    assert ModelSettings.make(arch, "sentence").shortlist_size == 15000
