"""Issue 45: other libraries' notices stay off stderr (matplotlib's font-cache notice, Python
warnings from torch or sklearn), the project's own messages go there, and -v lets the others'
warnings through."""

import logging
import warnings

import pytest

from rescorer.cli.logs import OwnMessages, configure_logging

FONT_CACHE = "Matplotlib is building the font cache; this may take a moment."


def third_party_warning():
    """A warning as sklearn or torch gives one (pytest's own recording of warnings set aside)."""
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("a third-party FutureWarning", FutureWarning)


@pytest.fixture()
def bare_root():
    """The root logger as a fresh `rescore` process finds it: call it to set pytest's handlers
    aside (pytest adds its own as each test starts); they come back after the test."""
    root = logging.getLogger()
    kept, level = root.handlers[:], root.level

    def bare():
        root.handlers = []
        return root

    yield bare
    root.handlers = kept
    root.setLevel(level)
    logging.captureWarnings(False)


def test_only_the_projects_messages_reach_stderr(bare_root, capsys):
    bare_root()
    configure_logging(logging.INFO)
    logging.getLogger("matplotlib.font_manager").warning(FONT_CACHE)
    logging.getLogger("matplotlib.font_manager").info("generated new fontManager")
    third_party_warning()
    logging.getLogger("rescorer").info("precision auto: fp32")
    logging.getLogger("moses_integration.child_process").warning("mert said something")
    assert capsys.readouterr().err == "precision auto: fp32\nmert said something\n"


def test_verbose_lets_other_libraries_warnings_through(bare_root, capsys):
    root = bare_root()
    configure_logging(logging.INFO)
    configure_logging(logging.DEBUG, verbose=True)  # -v after the command: the same handler, another filter
    logging.getLogger("matplotlib.font_manager").warning(FONT_CACHE)
    logging.getLogger("matplotlib.font_manager").info("generated new fontManager")
    third_party_warning()
    err = capsys.readouterr().err
    assert err.startswith(FONT_CACHE + "\n") and "FutureWarning: a third-party FutureWarning" in err
    assert len(root.handlers) == 1


@pytest.mark.parametrize("name, level, verbose, passed", [
    ("rescorer", logging.INFO, False, True),
    ("rescorer.io.compression", logging.WARNING, False, True),
    ("moses_integration.tuning.mert_moses", logging.DEBUG, False, True),
    ("rescorers", logging.WARNING, False, False),  # another package whose name starts the same
    ("matplotlib.font_manager", logging.WARNING, False, False),
    ("py.warnings", logging.WARNING, False, False),
    ("matplotlib.font_manager", logging.WARNING, True, True),
    ("matplotlib.font_manager", logging.INFO, True, False),
])
def test_the_filter(name, level, verbose, passed):
    record = logging.LogRecord(name, level, __file__, 1, "message", None, None)
    assert OwnMessages(verbose).filter(record) == passed
