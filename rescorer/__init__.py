"""rescorer: score Moses phrase tables with the GRU encoder-decoder of Cho et al. (2014)."""

__version__ = "0.1.0"
