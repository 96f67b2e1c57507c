"""`python -m rescorer ...` is `rescore ...`, so that `torchrun -m rescorer score ...` runs it on
every rank. On ranks other than 0, usage errors (which rank 0 reports too) are not repeated."""

from rescorer.runtime.failure_reports import install_signal_handlers

install_signal_handlers()  # before the heavy imports, as the `rescore` script does

import os  # noqa: E402
import sys  # noqa: E402

import click  # noqa: E402

from rescorer.cli.main import main  # noqa: E402


def run() -> None:
    if os.environ.get("RANK", "0") == "0":
        main(prog_name="rescore")
        return
    try:
        main.main(prog_name="rescore", standalone_mode=False)
    except click.UsageError as error:  # rank 0 says it
        sys.exit(error.exit_code)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except click.Abort:
        sys.exit(1)


run()
