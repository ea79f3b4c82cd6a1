"""torch-install: detect a machine, resolve the PyTorch build that runs on it, install it, check it.

Entry points: ``detectors.detect()`` -> ``Machine``; ``resolver.resolve(machine, request, matrix)`` -> ``Plan``;
``doctor.diagnose``; the ``torch-install`` command is ``cli.main``. A map: docs/architecture.md.
"""

__version__ = "0.1.0"
