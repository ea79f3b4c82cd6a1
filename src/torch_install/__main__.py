"""``python -m torch_install`` is the ``torch-install`` command."""

import sys

from .cli import console

sys.exit(console())
