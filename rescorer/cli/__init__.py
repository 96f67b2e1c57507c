"""The `rescore` command line: commands parse options, call the library and report; every
option two commands share is declared once, in `options`."""
