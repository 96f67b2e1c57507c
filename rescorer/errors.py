"""Exceptions the library raises on bad user input; the CLI turns each into one line, exit 1."""


class RescorerError(Exception):
    """Base class: a problem with the user's input, reported as one line without a traceback."""


class PhraseTableFormatError(RescorerError, ValueError):
    """A phrase-table line that cannot be parsed: the message names file, line and what is wrong."""


class ModelFileError(RescorerError, ValueError):
    """A model file that is missing, truncated, foreign or of an unknown format version."""


class CorpusError(RescorerError, ValueError):
    """A corpus file (for vocabulary counts) that is missing or unreadable."""


class ModelSettingError(RescorerError, ValueError):
    """Model settings that do not fit together: an unknown architecture or preset, or a setting
    the chosen architecture does not take; the message names the valid choices."""
