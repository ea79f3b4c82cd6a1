"""The CUDA toolkit → driver table, read both ways: driver → newest CUDA, toolkit → minimum driver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_install.container import ImageHint, target_from_hints
from torch_install.drivers import cuda_for_driver, driver_for_toolkit, toolkit_rows
from torch_install.machine import Gpu, Machine
from torch_install.package_data import load_json
from torch_install.render.nfd import nfd_labels
from torch_install.wheelnext.properties import driver_cuda, override_env, supported_properties

REFERENCE = Path(__file__).resolve().parent.parent / "scripts/reference/torch-matrix.json"
PLATFORM = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35")


def test_every_reference_row_is_in_the_table_with_its_drivers_and_confidence() -> None:
    rows = {r["cuda"]: r for r in toolkit_rows()}
    for ref in json.loads(REFERENCE.read_text())["cuda_driver_table"]:
        row = rows[ref["cuda"].replace(".x", ".0")]
        assert (row["label"], row["linux"], row["windows"]) == (
            ref["label"], ref["linux_x86_64"], ref["windows_x86_64"]), ref["cuda"]
        assert row["confidence"] == ref["confidence"], ref["cuda"]
        assert row["sources"] == ref["sources"], ref["cuda"]


def test_every_row_names_its_confidence_and_resolvable_sources() -> None:
    table = load_json("data/cuda-toolkit-drivers.json")
    cudas = [r["cuda"] for r in table["toolkits"]]
    assert len(cudas) == len(set(cudas))
    for row in table["toolkits"]:
        assert row["confidence"] in ("source-file", "secondary", "inferred"), row["cuda"]
        assert all(s in table["sources"] for s in row["sources"]), row["cuda"]
        assert row["sources"] or row["confidence"] == "inferred", row["cuda"]
        assert row["linux"] or row.get("branch"), row["cuda"]


@pytest.mark.parametrize("cuda, driver, release, confidence", [
    ("12.4.1", "550.54.15", "12.4.1", "source-file"), ("12.4", "550.54.14", "12.4.0", "source-file"),
    ("12.6.9", "560.35.05", "12.6.3", "source-file"), ("12.1.1", "530.30.02", "12.1.1", "source-file"),
    ("13.0.2", "580.95.05", "13.0.2", "source-file"), ("11.8", "520.61.05", "11.8.0", "source-file"),
    ("13.3.0", "610.43.02", "13.3.0", "secondary"), ("11.4.3", "470.82.01", "11.4.3", "source-file"),
    ("11.4.0", "470.42.01", "11.4.0", "source-file"), ("11.6.1", "510.47.03", "11.6.1", "source-file"),
    ("11.1", "455.23", "11.1.0", "source-file"), ("11.1.1", "455.32", "11.1.1", "source-file"),
    ("10.2.89", "440.33", "10.2.0", "source-file"),
])
def test_minimum_driver_of_a_toolkit(cuda: str, driver: str, release: str, confidence: str) -> None:
    assert driver_for_toolkit(cuda) == (driver, release, confidence)


@pytest.mark.parametrize("cuda", ["13.4", "13.4.1", "12.7", "14.0", "9.2"])
def test_toolkit_without_a_linux_driver_version_has_no_minimum(cuda: str) -> None:
    assert driver_for_toolkit(cuda) is None  # 13.4: only the driver branch R615 is published


def test_cuda_13_3_image_driver_is_labelled_secondary() -> None:
    target = target_from_hints([ImageHint("cuda", "13.3.0", "$CUDA_VERSION=13.3.0")], PLATFORM)
    assert target.nvidia_driver == "610.43.02"
    assert target.sources["nvidia_driver"].startswith("minimum Linux driver of CUDA 13.3.0 (secondary; base-image hint")


def test_cuda_11_4_update_image_gets_its_own_release_driver() -> None:
    # NVIDIA's Table 3: CUDA 11.4 Update 3 needs >= 470.82.01; the GA's 470.42.01 does not run it natively
    target = target_from_hints([ImageHint("cuda", "11.4.3", "$CUDA_VERSION=11.4.3")], PLATFORM)
    assert (target.cuda_driver_api, target.nvidia_driver) == ("11.4", "470.82.01")
    assert target.sources["nvidia_driver"].startswith("minimum Linux driver of CUDA 11.4.3 (base-image hint")
    assert not any("no driver known" in n for n in target.notes)


def test_source_file_image_driver_carries_no_label() -> None:
    target = target_from_hints([ImageHint("cuda", "12.8.1", "$CUDA_VERSION=12.8.1")], PLATFORM)
    assert target.sources["nvidia_driver"].startswith("minimum Linux driver of CUDA 12.8.1 (base-image hint")


@pytest.mark.parametrize("driver, cuda", [
    ("615.12", (13, 4)), ("610.43.02", (13, 3)), ("595.71.05", (13, 2)), ("580", (12, 9)),
    ("470.82.01", (11, 4)), ("510.39.01", (11, 6)), ("410.48", (10, 0)), ("410.47", None),
])
def test_profile_driver_gives_the_same_cuda_everywhere(driver: str, cuda: tuple[int, int] | None) -> None:
    machine = Machine(os="linux", arch="x86_64", nvidia_driver=driver, gpus=(Gpu("nvidia"),))
    assert driver_cuda(machine) == cuda
    assert nfd_labels(machine).get("cuda-driver-max") == (f"{cuda[0]}.{cuda[1]}" if cuda else None)
    detected = cuda_for_driver(driver)
    assert (tuple(int(p) for p in detected[0].split(".")) if detected else None) == cuda


def test_old_driver_profile_gets_provider_properties_from_the_table() -> None:
    machine = Machine(os="linux", arch="x86_64", nvidia_driver="470.82.01",
                      gpus=(Gpu("nvidia", compute_capability="8.6"),))
    props = supported_properties(machine)
    assert props.feature("nvidia", "cuda_version_lower_bound").values[:2] == ("11.4", "11.3")
    assert "nvidia: driver CUDA 11.4 inferred from driver 470.82.01" in props.notes[0]
    assert "11.4" in override_env(machine, "cu118").variables.values()


def test_profile_cuda_wins_over_the_driver() -> None:
    machine = Machine(os="linux", arch="x86_64", nvidia_driver="550.54.15", cuda_driver_api="12.2")
    assert driver_cuda(machine) == (12, 2)
