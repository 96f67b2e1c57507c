"""moses.ini and the Moses install: read and edit the config file, parse decoder flags, find the binaries."""
