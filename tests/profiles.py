"""Machine profile files for CLI tests, in the documented JSON form."""

from __future__ import annotations

import json

RTX_4090 = {"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "pci_id": "10de:2684", "compute_capability": "8.9"}


def profile(tmp_path, name="f.json", **fields) -> str:
    data = {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35", "nvidia_driver": "600.10.02",
            "gpus": [RTX_4090]}
    data.update(fields)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)
