"""Every test runs without the network: the default index (which --online also reads) is none unless a test
serves a loopback replica of it."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def no_default_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_INSTALL_DEFAULT_INDEX", "none")
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX"):  # the environment install/doctor act on is each test's to set
        monkeypatch.delenv(name, raising=False)
