"""The FLOP count of every architecture, checked against counts done by hand and against
PyTorch's own FLOP counter on the models."""

import pytest

from rescorer.models import ModelConfig, ModelSettings
from rescorer.models.flops import flops_per_batch, flops_per_pair

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


ATTENTION = [("rnnsearch", {}), ("luong", {}), ("luong", {"attention": "local-p", "attention_score": "concat"}),
             ("transformer", {})]


@pytest.mark.parametrize("arch, settings", [("cho2014", {})] + ATTENTION)
def test_batch_is_the_sum_over_pairs(arch, settings):
    config = ModelSettings.make(arch, "tiny", **settings).config(50, 60)
    src_lens, tgt_lens = [1, 2, 7, 0], [3, 1, 5, 2]
    expected = sum(flops_per_pair(config, s, t) for s, t in zip(src_lens, tgt_lens))
    assert flops_per_batch(config, src_lens, tgt_lens) == expected
    assert flops_per_batch(config, [], []) == 0


def test_rnnsearch_by_hand():
    # E=3 (R=2), H=4 (bidirectional: annotations A=8), attention 5, M=2 (2M=4), rank 6, V=11, GRU.
    config = ModelConfig(7, 11, embed_dim=3, embed_rank=2, hidden_size=4, maxout_units=2, output_rank=6,
                         arch="rnnsearch", bidirectional=True, attention_size=5)
    per_src = 12 + 2 * (2 * 3 * 12 + 2 * 4 * 12) + 2 * 8 * 5  # embedding, two GRUs, U_a h_j: 260
    per_tgt = 12 + 2 * 3 * 12 + 2 * 4 * 5 + 2 * 4 * 4 + 2 * 3 * 4 + 2 * 8 * 4 + 2 * 2 * 6 + 2 * 6 * 11  # 448
    per_position_pair = 2 * 5 + 2 * 8  # v_a, alpha_ij h_j
    per_transition = 2 * 4 * 12 + 2 * 8 * 12  # U s, C c
    s, t = 3, 2
    assert flops_per_pair(config, s, t) == (s * per_src + 2 * 4 * 4 + (t + 1) * (per_tgt + s * per_position_pair)
                                            + t * per_transition)


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


VARIANTS = [("cho2014", {}), ("cho2014", {"reset_after": True}), ("cho2014", {"cell": "lstm"}),
            ("cho2014", {"bidirectional": True, "encoder_layers": 2, "reverse_source": True}),
            ("rnnsearch", {}), ("rnnsearch", {"cell": "lstm", "bidirectional": False}),
            ("luong", {}), ("luong", {"cell": "gru", "input_feeding": False}),
            ("luong", {"attention": "local-m", "attention_score": "dot"}),
            ("luong", {"attention": "local-p", "attention_score": "concat", "bidirectional": True}),
            ("luong", {"attention": "local-p", "input_feeding": False}),
            ("transformer", {}), ("transformer", {"tied_embeddings": False, "encoder_layers": 1, "decoder_layers": 3}),
            ("rnnsearch", {"layer_norm": True}), ("luong", {"layer_norm": True})]


@pytest.mark.parametrize("arch, settings", VARIANTS, ids=[f"{a}-{s}" for a, s in VARIANTS])
def test_count_matches_the_matmuls_the_model_runs(arch, settings):
    """PyTorch's own FLOP counter on rescorer's model agrees exactly when nothing is padded."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    from rescorer.models import build_model

    config = ModelSettings.make(arch, "tiny", **settings).config(23, 29)
    if arch == "transformer":
        config = config.replace(embed_dim=8, hidden_size=12)
    else:
        config = config.replace(embed_dim=8, embed_rank=4, hidden_size=12, output_rank=5,
                                **({"maxout_units": 6} if config.maxout_units else {}))
    model = build_model(config).eval()
    batch, src_len, tgt_len = 3, 4, 5
    generator = torch.Generator().manual_seed(0)
    src = torch.randint(3, config.src_vocab_size, (batch, src_len), generator=generator)
    tgt = torch.randint(3, config.tgt_vocab_size, (batch, tgt_len), generator=generator)
    # The counter cannot see inside fused attention kernels (nn.MultiheadAttention's inference
    # fast path, the CPU's flash attention): count the same products unfused
    fast_path = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.inference_mode(), sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
            model(src, torch.full((batch,), src_len), tgt, torch.full((batch,), tgt_len))
    finally:
        torch.backends.mha.set_fastpath_enabled(fast_path)
    assert counter.get_total_flops() == flops_per_batch(config, [src_len] * batch, [tgt_len] * batch)


def test_transformer_by_hand():
    # d 4, feed-forward 6, 1 encoder and 2 decoder layers, V 11, tied output (one 4 x 11 matrix).
    config = ModelConfig(7, 11, embed_dim=4, embed_rank=None, hidden_size=6, maxout_units=None, output_rank=None,
                         arch="transformer", encoder_layers=1, decoder_layers=2, attention_heads=2,
                         tied_embeddings=True)
    feed_forward = 2 * 4 * 6 * 2  # 96
    per_src = (2 * 4 * 12 + 2 * 4 * 4 + feed_forward) + 2 * (2 * 4 * 8)  # encoder layer; decoder's K, V: 352
    per_tgt = 2 * (2 * 4 * 12 + 2 * 4 * 4 + 2 * (2 * 4 * 4) + feed_forward) + 2 * 4 * 11  # 664
    per_pair_of_positions = 2 * 4 + 2 * 4  # q.k and alpha v over both heads
    s, t = 3, 2
    expected = (s * per_src + (t + 1) * per_tgt
                + per_pair_of_positions * (1 * s * s + 2 * ((t + 1) ** 2 + (t + 1) * s)))
    assert flops_per_pair(config, s, t) == expected
    assert flops_per_batch(config, [3, 1, 4], [2, 5, 0]) == sum(
        flops_per_pair(config, a, b) for a, b in zip([3, 1, 4], [2, 5, 0]))
