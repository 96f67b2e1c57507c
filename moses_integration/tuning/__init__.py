"""Tune a moses.ini's weights with mert-moses.pl and read back its iterations."""
