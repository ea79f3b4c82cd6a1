"""`torch-install unpin`: undo `install --pin` in an environment, each file it changed put back exactly as it was."""

from __future__ import annotations

import argparse

from . import common, targets


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "unpin", help="undo install --pin: put back every file it changed, exactly as it was",
        description="Put back every file `install --pin` changed in the environment (its pip.conf, uv's "
                    "configuration beside ./.venv) exactly as it was before the first pin, and remove the constraints "
                    "file. A file changed by someone else since torch-install wrote it is left as it is, and a line "
                    "says so (exit code 1). Exit code 0: undone, or nothing to undo.")
    parser.add_argument("--python", metavar="PATH", type=targets.non_empty,
                        help="the environment's interpreter (default, as install: $VIRTUAL_ENV, $CONDA_PREFIX, "
                             "./.venv, else this one unless it is a pipx or uv tool environment)")
    common.add_lock_timeout_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os

    from ..environment.lock import DEFAULT_TIMEOUT, environment_lock
    from ..environment.pin import journal_path, unpin
    from ..errors import EXIT_OK, EXIT_WARNINGS
    from ..user_files import journal_files

    interpreter = common.target_interpreter(args.python)
    prefix = interpreter.prefix or os.path.dirname(interpreter.executable)
    timeout = DEFAULT_TIMEOUT if args.lock_timeout is None else args.lock_timeout
    with environment_lock(prefix, timeout, common.say):
        if not journal_files(journal_path(prefix)):
            common.say(f"torch-install: nothing to undo: {prefix} has no pin of torch-install's")
            return EXIT_OK
        undone = unpin(prefix)
    for line in (*undone.done, *undone.left):
        common.say(f"torch-install: {line}")
    return EXIT_WARNINGS if undone.left else EXIT_OK
