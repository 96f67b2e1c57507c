"""The registry and the one table of settings: presets, defaults, and refusals naming the valid
choices."""

import pytest

from rescorer.errors import ModelSettingError
from rescorer.models import (ARCHITECTURES, ModelConfig, ModelSettings, architecture_names, build_model,
                             check_config, get_architecture)
from rescorer.models.settings import (MODEL_OPTION_KEYS, SETTING_NAMES, ModelOptions, applicable_settings,
                                      setting_flag)


def test_registry_holds_the_four_architectures_with_four_presets_each():
    assert architecture_names() == ["cho2014", "rnnsearch", "luong", "transformer"]
    for architecture in ARCHITECTURES.values():
        assert set(architecture.presets) == {"paper", "small", "tiny", "sentence"}
        for preset in architecture.presets:
            ModelSettings.make(architecture.name, preset).check()
    with pytest.raises(ModelSettingError,
                       match="unknown architecture 'gpt'; valid: cho2014, rnnsearch, luong, transformer"):
        get_architecture("gpt")


def test_cho2014_defaults_are_version_1_configs():
    # A 0.1.0 model file's config dict (no arch, no settings) is today's cho2014 GRU model.
    v1 = dict(src_vocab_size=50, tgt_vocab_size=60, embed_dim=32, embed_rank=16, hidden_size=48,
              maxout_units=32, output_rank=32, reset_after=False)
    assert ModelConfig.from_dict(v1) == ModelSettings.make("cho2014", "tiny").config(50, 60)


@pytest.mark.parametrize("arch, preset, given, want", [
    ("cho2014", "small", {}, dict(cell="gru", hidden_size=256, bidirectional=False, decoder_layers=None)),
    ("rnnsearch", "paper", {}, dict(bidirectional=True, embed_dim=620, attention_size=1000, output_rank=None)),
    ("rnnsearch", "small", {"bidirectional": False, "cell": "lstm"}, dict(bidirectional=False, cell="lstm")),
    ("luong", "paper", {}, dict(cell="lstm", encoder_layers=4, decoder_layers=4, attention="global",
                                attention_score="general", attention_window=None, input_feeding=True,
                                maxout_units=None)),
    ("luong", "small", {"attention": "local-p"}, dict(attention_window=3)),
    ("luong", "tiny", {"attention": "local-m", "attention_window": 2}, dict(attention_window=2)),
    ("luong", "small", {"attention_score": "concat"}, dict(attention_size=256)),
    ("luong", "small", {"encoder_layers": 1, "input_feeding": False}, dict(encoder_layers=1, input_feeding=False)),
    ("cho2014", "tiny", {"reset_after": True}, dict(reset_after=True)),
    ("cho2014", "small", {}, dict(dropout=0.0)),
    ("luong", "small", {"dropout": 0.3}, dict(dropout=0.3, layer_norm=False)),
    ("rnnsearch", "tiny", {"layer_norm": True}, dict(layer_norm=True)),
    ("transformer", "small", {}, dict(embed_dim=256, hidden_size=1024, encoder_layers=3, decoder_layers=3,
                                      attention_heads=4, tied_embeddings=True, embed_rank=None,
                                      output_rank=None, maxout_units=None, dropout=0.0)),
    ("transformer", "paper", {"dropout": 0.1, "tied_embeddings": False},
     dict(embed_dim=512, hidden_size=2048, encoder_layers=6, attention_heads=8, dropout=0.1,
          tied_embeddings=False)),
    ("transformer", "tiny", {"encoder_layers": 1, "attention_heads": 4}, dict(encoder_layers=1, attention_heads=4)),
])
def test_presets_defaults_and_choices_resolve(arch, preset, given, want):
    config = ModelSettings.make(arch, preset, **given).config(100, 200)
    assert config.arch == arch and (config.src_vocab_size, config.tgt_vocab_size) == (100, 200)
    assert {key: getattr(config, key) for key in want} == want


@pytest.mark.parametrize("arch, given, message", [
    ("cho2014", {"decoder_layers": 2}, "--decoder-layers does not apply to --arch cho2014 (only to luong, "
                                       "transformer); cho2014's settings are --cell, --encoder-layers, "
                                       "--bidirectional, --reverse-source, --gru-form, --layer-norm, --dropout"),
    ("rnnsearch", {"attention": "local-m"}, "--attention does not apply to --arch rnnsearch"),
    ("cho2014", {"input_feeding": False}, "--input-feeding does not apply"),
    ("luong", {"attention_window": 3}, "--attention-window applies to --attention local-m or local-p only"),
    ("luong", {"attention_score": "dot", "bidirectional": True}, "dot needs annotations as wide as the decoder"),
    ("luong", {"cell": "lstm", "reset_after": True}, "--gru-form applies to --cell gru only"),
    ("cho2014", {"cell": "lstm", "reset_after": False}, "--gru-form applies to --cell gru only"),
    ("transformer", {"cell": "lstm"}, "--cell does not apply to --arch transformer (only to cho2014, rnnsearch, "
                                      "luong); transformer's settings are --encoder-layers, --decoder-layers, "
                                      "--attention-heads, --tied-embeddings, --dropout"),
    ("transformer", {"bidirectional": True}, "--bidirectional does not apply to --arch transformer"),
    ("transformer", {"attention_heads": 3}, "transformer: 3 attention heads do not divide the model width 256"),
    ("cho2014", {"attention_heads": 2}, "--attention-heads does not apply to --arch cho2014 (only to transformer)"),
    ("cho2014", {"dropout": 1.0}, "--dropout must be a number in [0, 1), found 1.0"),
    ("transformer", {"dropout": -0.1}, "--dropout must be a number in [0, 1), found -0.1"),
    ("rnnsearch", {"dropout": float("nan")}, "--dropout must be a number in [0, 1), found nan"),
    ("rnnsearch", {"dropout": float("inf")}, "--dropout must be a number in [0, 1), found inf"),
    ("transformer", {"layer_norm": True}, "--layer-norm does not apply to --arch transformer"),
])
def test_settings_that_do_not_apply_are_refused(arch, given, message):
    with pytest.raises(ModelSettingError) as error:
        ModelSettings.make(arch, "small", **given).check()
    assert message in str(error.value) and "\n" not in str(error.value)


def test_unknown_preset_and_setting():
    with pytest.raises(ModelSettingError, match="unknown preset 'huge'; valid: paper, small, tiny"):
        ModelSettings.make("luong", "huge").check()
    with pytest.raises(ModelSettingError, match="unknown model settings"):
        ModelSettings.make("luong", "tiny", heads=8)


@pytest.mark.parametrize("changes, message", [
    (dict(arch="luong"), "maxout_units does not apply to architecture luong"),
    (dict(cell="rnn"), "unknown cell 'rnn'"),
    (dict(cell="lstm", reset_after=True), "needs cell gru"),
    (dict(maxout_units=None), "cho2014 needs maxout_units"),
    (dict(hidden_size=0), "hidden_size must be a positive integer"),
    (dict(dropout=1.5), r"--dropout must be a number in \[0, 1\), found 1.5"),
    (dict(arch="transformer", maxout_units=None, layer_norm=True), "layer_norm applies to recurrent architectures"),
])
def test_configs_read_from_files_are_checked(changes, message):
    config = ModelSettings.make("cho2014", "tiny").config(10, 10).replace(**changes)
    with pytest.raises(ModelSettingError, match=message):
        build_model(config)
    with pytest.raises(ModelSettingError, match=message):
        check_config(config)


def test_every_setting_applies_somewhere_and_describe_names_them():
    for name in SETTING_NAMES:
        assert any(name in applicable_settings(arch) for arch in architecture_names()), name
    described = ModelSettings.make("luong", "small", attention="local-p").describe()
    assert described == {"arch": "luong", "preset": "small", "cell": "lstm", "encoder-layers": 2,
                         "bidirectional": False, "reverse-source": False, "decoder-layers": 2,
                         "attention": "local-p", "attention-score": "general", "attention-window": 3,
                         "input-feeding": True}
    assert ModelSettings.make("cho2014", "small", reset_after=True).describe()["gru-form"] == "cudnn"


def test_configs_without_dropout_load_as_before():
    """Format-2 files written before dropout existed have no key for it: rate 0, the model as before."""
    config = ModelSettings.make("rnnsearch", "tiny").config(50, 60)
    older = {key: value for key, value in config.to_dict().items() if key not in ("dropout", "layer_norm")}
    assert ModelConfig.from_dict(older) == config and config.dropout == 0.0
    assert "dropout" not in ModelSettings.make("rnnsearch", "tiny").describe()
    assert ModelSettings.make("rnnsearch", "tiny", dropout=0.2).describe()["dropout"] == 0.2


def test_transformer_config_checks():
    config = ModelSettings.make("transformer", "tiny").config(10, 10)
    for changes, message in [(dict(embed_rank=16), "embed_rank and output_rank None"),
                             (dict(tied_embeddings=None), "tied_embeddings true or false"),
                             (dict(attention_heads=None), "transformer needs attention_heads")]:
        with pytest.raises(ModelSettingError, match=message):
            build_model(config.replace(**changes))
    model = build_model(config)
    assert model.output_left.weight is model.tgt_embed.table.weight
    untied = build_model(config.replace(tied_embeddings=False))
    assert untied.output_left.weight is not untied.tgt_embed.table.weight


def test_the_model_options_are_one_record_the_command_line_and_the_checkpoint_read():
    """A model setting is one field of ModelOptions: its option is made from it, a checkpoint
    stores its value as given (the CLI's word), and a value its kind does not take is refused."""
    from click.testing import CliRunner

    from rescorer.cli.main import main
    from rescorer.records import SettingError, recorded_values

    helps = {command: CliRunner().invoke(main, [command, "--help"]).output for command in ("train", "run")}
    for name in MODEL_OPTION_KEYS:
        assert all(setting_flag(name) in text for text in helps.values()), name
    stored = recorded_values(ModelOptions(arch="luong", cell="gru", reset_after="cudnn"))
    assert tuple(stored) == MODEL_OPTION_KEYS
    assert (stored["arch"], stored["reset_after"], stored["dropout"]) == ("luong", "cudnn", None)
    assert ModelSettings.from_options(ModelOptions(reset_after="cudnn")).config(10, 10).reset_after is True
    with pytest.raises(SettingError, match=r"--dropout 1.0: expected < 1"):
        ModelOptions(dropout=1.0)
    with pytest.raises(SettingError, match="--cell 'rnn': valid: gru, lstm"):
        ModelOptions(cell="rnn")
