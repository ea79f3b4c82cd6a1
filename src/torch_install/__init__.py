"""torch-install: detect a machine, resolve the PyTorch build that runs on it, install it, check it."""

__version__ = "0.1.0"
