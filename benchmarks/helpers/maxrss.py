"""Run a command and write its peak resident memory (KiB) to a file: ``python maxrss.py OUT -- CMD...``.

Why a launcher: Linux charges a child's ru_maxrss with the resident size of the process it
was forked (or vforked) from, so a child of the big benchmark process would report at least
the benchmark's own memory. Forked from this small launcher, it reports its own peak.
"""

import os
import sys


def main() -> int:
    out_path, separator, *command = sys.argv[1:]
    if separator != "--" or not command:
        print("usage: python maxrss.py OUT -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    with open(out_path, "w") as out:
        out.write(f"{usage.ru_maxrss}\n")
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
