"""The roofline's FLOP count, checked against counts done by hand."""

import pytest

from rescorer.flops import flops_per_batch, flops_per_pair
from rescorer.model import ModelConfig

TINY = ModelConfig(src_vocab_size=7, tgt_vocab_size=11, embed_dim=3, embed_rank=2, hidden_size=4,
                   maxout_units=5, output_rank=6)
PAPER = ModelConfig(src_vocab_size=15000, tgt_vocab_size=15000, embed_dim=500, embed_rank=100,
              hidden_size=1000, maxout_units=500, output_rank=500)


# Hand counts for TINY (E=3, R=2, H=4, M=5 so 2M=10, r=6, V_tgt=11), 2 x rows x cols per product:
#   per source token:  R*E 2*2*3=12 + W 2*3*12=72 + U 2*4*12=96                      = 180
#   per pair:          V 2*4*4=32 + V' 32 + C 2*4*12=96 + O_c 2*4*10=80               = 240
#   per target step:   R*E 12 + W' 72 + U' 96 + O_h 2*4*10=80 + O_y 2*3*10=60
#                      + G_r 2*5*6=60 + G_l 2*6*11=132                                = 512
@pytest.mark.parametrize(
    "src_len, tgt_len, expected",
    [
        (0, 0, 240 + 512),
        (1, 0, 180 + 240 + 512),
        (0, 1, 240 + 2 * 512),
        (2, 3, 2 * 180 + 240 + 4 * 512),  # 2648
        (7, 7, 7 * 180 + 240 + 8 * 512),
    ],
)
def test_tiny_config_matches_hand_count(src_len, tgt_len, expected):
    assert flops_per_pair(TINY, src_len, tgt_len) == expected


def test_full_rank_embedding_is_a_lookup_and_full_output_is_one_matrix():
    sizes = ModelConfig(**{**TINY.__dict__, "embed_rank": None, "output_rank": None})
    # per source token 72 + 96; per pair 240; per target step 72 + 96 + 80 + 60 + 2*5*11=110
    assert flops_per_pair(sizes, 2, 3) == 2 * 168 + 240 + 4 * 418


def test_paper_sizes():
    # per source token 0.1M + 3M + 6M; per pair 2M + 2M + 6M + 2M;
    # per target step 0.1M + 3M + 6M + 2M + 1M + 0.5M + 15M
    assert flops_per_pair(PAPER, 4, 4) == 4 * 9_100_000 + 12_000_000 + 5 * 27_600_000


def test_batch_is_the_sum_over_pairs():
    src_lens, tgt_lens = [1, 2, 7, 0], [3, 1, 5, 2]
    expected = sum(flops_per_pair(TINY, s, t) for s, t in zip(src_lens, tgt_lens))
    assert flops_per_batch(TINY, src_lens, tgt_lens) == expected
    assert flops_per_batch(TINY, [], []) == 0


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: flops_per_pair(TINY, -1, 2), "src_len=-1"),
        (lambda: flops_per_batch(TINY, [1, 2], [1]), "got 1 and 2"),
    ],
)
def test_bad_lengths_are_rejected(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("reset_after", [False, True])
def test_count_matches_the_matmuls_the_model_runs(reset_after):
    """PyTorch's own FLOP counter on rescorer's model agrees exactly when nothing is padded."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from rescorer.model import EncoderDecoder, ModelConfig

    config = ModelConfig(src_vocab_size=23, tgt_vocab_size=29, embed_dim=8, embed_rank=4, hidden_size=12,
                         maxout_units=6, output_rank=5, reset_after=reset_after)
    model = EncoderDecoder(config).eval()
    batch, src_len, tgt_len = 3, 4, 5
    generator = torch.Generator().manual_seed(0)
    src = torch.randint(3, config.src_vocab_size, (batch, src_len), generator=generator)
    tgt = torch.randint(3, config.tgt_vocab_size, (batch, tgt_len), generator=generator)
    with torch.inference_mode(), FlopCounterMode(display=False) as counter:
        model(src, torch.full((batch,), src_len), tgt, torch.full((batch,), tgt_len))
    assert counter.get_total_flops() == flops_per_batch(config, [src_len] * batch, [tgt_len] * batch)
