"""`rescore`, the console script: a thin entry point into the package's commands
(rescorer/cli/), kept at the top level as the design card has it."""

from rescorer.runtime.failure_reports import install_signal_handlers

if __name__ == "__main__":  # `python cli.py ...`; the `rescore` script is armed in rescorer.cli.main
    install_signal_handlers()

from rescorer.cli.main import main  # noqa: E402

__all__ = ["main"]

if __name__ == "__main__":
    main(prog_name="rescore")
