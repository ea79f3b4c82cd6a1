"""`plan --online` end to end against a real loopback index: learning, merging, mirrors, hashes, fallbacks."""

from __future__ import annotations

import json
import re
import socket

import pytest
from werkzeug import Response

from index_pages import load_rows, parse_row, serve_index, sha
from profiles import profile
from servers import TRUNCATED, RawServer, closed_port
from torch_install.cli import main
from torch_install.machine import Machine

ONLY_CU134 = [parse_row("cu134 torch-2.16.0+cu134-cp312-cp312-manylinux_2_28_x86_64.whl >=3.11")]


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_RETRIES", "0")
    monkeypatch.setenv("TORCH_INSTALL_INDEX_TIMEOUT", "2")
    monkeypatch.delenv("TORCH_INSTALL_INDEX_BASE", raising=False)


def plan_json(capsys, *argv) -> tuple[int, dict, str]:
    code = main(["plan", "--format", "json", *argv])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


# ------------------------------------------------------------------------------------------------ learning

@pytest.mark.parametrize("form", ["html", "json"])
def test_new_release_and_variant_from_a_mirror_only_offering_them(httpserver, capsys, tmp_path, form):
    base = serve_index(httpserver, ONLY_CU134, form=form)
    code, plan, err = plan_json(capsys, "--online", "--index-base", base, "--target", profile(tmp_path))
    assert err == ""
    assert plan["choice"]["torch"] == "2.16.0" and plan["choice"]["variant"] == "cu134"
    assert plan["choice"]["index_url"] == f"{base}/cu134"
    assert plan["commands"]["pip"].endswith(f"torch==2.16.0+cu134 --index-url {base}/cu134")
    assumed = [n for n in plan["notes"] if "assumed" in n]
    assert any("GPU architectures (sm_75 sm_80 sm_86 sm_90 sm_100 sm_120) assumed from cu132 of torch 2.15.0" in n
               for n in assumed)
    assert any("not in the embedded matrix" in n for n in plan["notes"])
    assert code == 0


def test_text_plan_says_which_facts_were_assumed(httpserver, capsys, tmp_path):
    base = serve_index(httpserver, ONLY_CU134)
    assert main(["plan", "--online", "--index-base", base, "--target", profile(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "torch 2.16.0, variant cu134" in out
    assert "index: GPU architectures" in out and "assumed from cu132" in out


def test_releases_missing_on_the_index_are_not_chosen(httpserver, capsys, tmp_path):
    """Driver 550 runs CUDA 12 only. Offline, the newest such build is 2.14.1+cu126; this index has no 2.14,
    so the newest CUDA 12 build it offers, 2.9.1+cu128, is chosen."""
    offline = plan_json(capsys, "--target", profile(tmp_path, nvidia_driver="550.54.15"))[1]
    assert offline["choice"]["torch"] == "2.14.1" and offline["choice"]["variant"] == "cu126"
    base = serve_index(httpserver, load_rows())
    _, plan, _ = plan_json(capsys, "--online", "--index-base", base,
                           "--target", profile(tmp_path, nvidia_driver="550.54.15"))
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.9.1", "cu128")
    assert "driver-too-old" in {w["code"] for w in plan["warnings"]}
    assert any("not on the index for this platform and Python" in n and "2.14.1" in n for n in plan["notes"])


def test_new_rocm_variant_inherits_the_nearest_gfx_list(httpserver, capsys, tmp_path):
    base = serve_index(httpserver, load_rows(), form="json")
    amd = {"vendor": "amd", "name": "AMD Radeon RX 7900 XTX", "gfx": "gfx1100", "pci_id": "1002:744c"}
    _, plan, _ = plan_json(capsys, "--online", "--index-base", base, "--target",
                           profile(tmp_path, nvidia_driver=None, rocm="7.14.0", gpus=[amd]))
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.16.0", "rocm7.14")
    assert any("gfx targets assumed from rocm7.2 of torch 2.14" in n for n in plan["notes"])


def test_free_threaded_python_only_gets_releases_with_its_wheels(httpserver, capsys, tmp_path):
    base = serve_index(httpserver, load_rows())
    _, plan, _ = plan_json(capsys, "--online", "--index-base", base, "--target", profile(tmp_path, python="3.14t"))
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.15.0", "cu132")


def test_windows_target_reads_windows_wheels(httpserver, capsys, tmp_path):
    base = serve_index(httpserver, load_rows())
    _, plan, _ = plan_json(capsys, "--online", "--index-base", base, "--target",
                           profile(tmp_path, os="windows", glibc=None, nvidia_driver="600.10"))
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.16.0", "cu134")
    assert plan["commands"]["pip"].endswith(f"--index-url {base}/cu134")


def test_mirror_from_the_environment(httpserver, capsys, tmp_path, monkeypatch):
    base = serve_index(httpserver, ONLY_CU134, prefix="/artifactory/api/pypi/pytorch/whl")
    monkeypatch.setenv("TORCH_INSTALL_INDEX_BASE", base)
    _, plan, _ = plan_json(capsys, "--online", "--target", profile(tmp_path))
    assert plan["choice"]["index_url"] == f"{base}/cu134"
    assert httpserver.log[0][0].path == "/artifactory/api/pypi/pytorch/whl/torch/"


def test_partial_mirror_without_the_all_variants_page(httpserver, capsys, tmp_path):
    """A mirror of some variant directories only: /whl/torch/ is 404, the variant pages are read one by one."""
    rows = [r for r in load_rows() if r[0] in ("cu130", "cpu")]
    pages = {}
    for variant, filename, requires in rows:
        pages.setdefault(variant, []).append((variant, filename, requires))
    from index_pages import html_page

    for variant, page_rows in pages.items():
        httpserver.expect_request(f"/whl/{variant}/torch/").respond_with_data(html_page("torch", page_rows))
    httpserver.no_handler_status_code = 404  # the variant directories the mirror lacks
    _, plan, err = plan_json(capsys, "--online", "--index-base", httpserver.url_for("/whl"),
                             "--target", profile(tmp_path))
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.15.0", "cu130")
    assert err == ""


# ------------------------------------------------------------------------------------------------ hashes

def test_hashes_for_every_matching_file_of_the_exact_build(httpserver, capsys, tmp_path):
    rows = [*ONLY_CU134,
            parse_row("cu134 torch-2.16.0+cu134-1-cp312-cp312-manylinux_2_28_x86_64.whl"),  # a re-upload (build tag)
            parse_row("cu134 torch-2.16.0+cu134-cp313-cp313-manylinux_2_28_x86_64.whl"),  # other Python
            parse_row("cu134 torch-2.16.0+cu134-cp312-cp312-win_amd64.whl")]  # other platform
    base = serve_index(httpserver, rows)
    code = main(["plan", "--online", "--index-base", base, "--target", profile(tmp_path), "--format", "requirements",
                 "--hashes"])
    out = capsys.readouterr().out
    assert code == 0
    hashes = sorted(line.strip().split(":")[1].rstrip(" \\") for line in out.splitlines() if "--hash=" in line)
    assert hashes == sorted([sha(ONLY_CU134[0][1]), sha(rows[1][1])])
    assert f"--index-url {base}/cu134" in out
    assert "torch==2.16.0+cu134 \\\n    --hash=sha256:" in out


def test_hashes_need_the_requirements_format(capsys, tmp_path):
    assert main(["plan", "--hashes", "--target", profile(tmp_path)]) == 2
    assert "--hashes goes with --format requirements" in capsys.readouterr().err


def test_hashes_when_the_index_is_down_is_an_environment_error(capsys, tmp_path):
    base = f"http://127.0.0.1:{closed_port()}/whl"
    code = main(["plan", "--index-base", base, "--target", profile(tmp_path), "--format", "requirements",
                 "--hashes"])
    err = capsys.readouterr().err
    assert code == 3
    assert len(err.strip().splitlines()) == 1 and err.startswith("torch-install: error: --hashes:")


# ------------------------------------------------------------------------------------------------ failures

def fallback(capsys, tmp_path, base, *extra) -> tuple[dict, str]:
    code, plan, err = plan_json(capsys, "--online", "--index-base", base, "--target", profile(tmp_path), *extra)
    assert code in (0, 1)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("torch-install: warning: "), err
    assert "Traceback" not in err
    return plan, lines[0]


def fallback_from_raw(capsys, tmp_path, response: bytes | None) -> tuple[dict, str]:
    """``fallback`` against a loopback server that answers every request with ``response`` (None: never answers)."""
    server = RawServer(response)
    try:
        return fallback(capsys, tmp_path, f"http://127.0.0.1:{server.port}/whl")
    finally:
        server.close()


EMBEDDED = ("2.15.0", "cu132")  # what the embedded matrix gives the profile (driver 600, RTX 4090)


def test_unreachable_index_falls_back_to_the_embedded_matrix(capsys, tmp_path):
    plan, warning = fallback(capsys, tmp_path, f"http://127.0.0.1:{closed_port()}/whl")
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == EMBEDDED
    assert "index unreachable (" in warning and "cannot connect" in warning
    assert warning.endswith("; using the embedded matrix")


def test_server_errors_fall_back(httpserver, capsys, tmp_path):
    httpserver.expect_request("/whl/torch/").respond_with_data("Internal Server Error", status=500)
    plan, warning = fallback(capsys, tmp_path, httpserver.url_for("/whl"))
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == EMBEDDED
    assert "HTTP 500" in warning


@pytest.mark.slow
def test_slow_server_times_out_and_falls_back(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_INSTALL_INDEX_TIMEOUT", "0.3")
    plan, warning = fallback_from_raw(capsys, tmp_path, None)
    assert re.search(r"timed out|not complete after 0.3 s", warning), warning  # the socket's or the attempt's bound
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == EMBEDDED


def test_truncated_body_falls_back(capsys, tmp_path):
    plan, warning = fallback_from_raw(capsys, tmp_path, TRUNCATED)
    assert "truncated response" in warning


def test_huge_body_is_refused_and_falls_back(capsys, tmp_path):
    huge = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5000000000\r\nConnection: close\r\n\r\n"
            + b"<a>" * 1000)
    plan, warning = fallback_from_raw(capsys, tmp_path, huge)
    assert "over the 67108864-byte limit" in warning
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == EMBEDDED


def test_redirect_to_plain_http_falls_back(httpserver, capsys, tmp_path):
    httpserver.expect_request("/whl/torch/").respond_with_response(
        Response(status=302, headers={"Location": "http://mirror.example.com/whl/torch/"}))
    _, warning = fallback(capsys, tmp_path, httpserver.url_for("/whl"))
    assert "refused a redirect to http://mirror.example.com/whl/torch/" in warning


def test_hostile_html_gives_a_plan_from_its_real_wheels(httpserver, capsys, tmp_path):
    good = "torch-2.16.0+cu134-cp312-cp312-manylinux_2_28_x86_64.whl"
    page = ("<html><script>document.write('<a href=\"/whl/cu999/torch-9.0.0+cu999-cp312-cp312-"
            "manylinux_2_28_x86_64.whl\">')</script><body><a href=\"javascript:alert(1)\">" + good + "</a>"
            "<a href=\"/whl/cu134/torch-2.16.0%2Bcu134-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=" + sha(good)
            + "\" data-requires-python=\"&gt;=3.11\">" + good + "</a><a href='/whl/cu1000/torch-3.0.0%2Bcu1000-"
            "cp312-cp312-manylinux_2_28_x86_64.whl'>x</a><div <<<" + "\x00" * 10)
    httpserver.expect_request("/whl/torch/").respond_with_data(page, content_type="text/html")
    _, plan, err = plan_json(capsys, "--online", "--index-base", httpserver.url_for("/whl"),
                             "--target", profile(tmp_path))
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.16.0", "cu134")
    assert err == ""


def test_unknown_cuda_major_is_not_offered(httpserver, capsys, tmp_path):
    rows = [parse_row("cu140 torch-2.17.0+cu140-cp312-cp312-manylinux_2_28_x86_64.whl"), *ONLY_CU134]
    base = serve_index(httpserver, rows)
    _, plan, _ = plan_json(capsys, "--online", "--index-base", base, "--target", profile(tmp_path))
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.16.0", "cu134")


# ------------------------------------------------------------------------------------------------ cache

def test_cached_data_is_used_when_the_index_goes_down(httpserver, capsys, tmp_path, monkeypatch):
    base = serve_index(httpserver, ONLY_CU134)
    plan_json(capsys, "--online", "--index-base", base, "--target", profile(tmp_path))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_TTL", "0")  # expired: must revalidate
    httpserver.clear()
    httpserver.expect_request("/whl/torch/").respond_with_data("Bad Gateway", status=502)
    code, plan, err = plan_json(capsys, "--online", "--index-base", base, "--target", profile(tmp_path))
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.16.0", "cu134")
    assert err.startswith("torch-install: warning: index unreachable (") and "HTTP 502" in err
    assert "; using cached data from 20" in err and err.count("\n") == 1


def test_warm_cache_makes_no_request(httpserver, capsys, tmp_path):
    base = serve_index(httpserver, ONLY_CU134)
    first = plan_json(capsys, "--online", "--index-base", base, "--target", profile(tmp_path))[1]
    requests_made = len(httpserver.log)
    second = plan_json(capsys, "--online", "--index-base", base, "--target", profile(tmp_path))[1]
    assert len(httpserver.log) == requests_made
    assert first["choice"] == second["choice"] and first["notes"] == second["notes"]


def test_offline_uses_only_the_cache(httpserver, capsys, tmp_path):
    base = serve_index(httpserver, ONLY_CU134)
    _, plan, err = plan_json(capsys, "--online", "--offline", "--index-base", base, "--target", profile(tmp_path))
    assert httpserver.log == []
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == EMBEDDED
    assert "--offline" in err and err.strip().endswith("using the embedded matrix")
    plan_json(capsys, "--online", "--index-base", base, "--target", profile(tmp_path))
    seen = len(httpserver.log)
    _, plan, err = plan_json(capsys, "--online", "--offline", "--index-base", base, "--target", profile(tmp_path))
    assert len(httpserver.log) == seen and err == ""
    assert plan["choice"]["torch"] == "2.16.0"


def test_offline_alone_never_touches_the_network(capsys, tmp_path, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("network used")

    monkeypatch.setattr(socket, "create_connection", no_network)
    _, plan, err = plan_json(capsys, "--offline", "--target", profile(tmp_path))
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == EMBEDDED and err == ""


# ------------------------------------------------------------------------------------------------ input errors

@pytest.mark.parametrize(("argv", "message"), [
    (["--index-base", "http://mirror.example.com/whl"], "plain http"),
    (["--index-base", "ftp://mirror.example.com/whl"], "http(s)"),
])
def test_bad_index_base_is_a_usage_error(capsys, tmp_path, argv, message):
    assert main(["plan", "--online", *argv, "--target", profile(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_bad_timeout_setting_is_an_input_error(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_INSTALL_INDEX_TIMEOUT", "soon")
    assert main(["plan", "--online", "--target", profile(tmp_path)]) == 2
    assert "TORCH_INSTALL_INDEX_TIMEOUT" in capsys.readouterr().err


def test_target_tags_for_profiles():
    from torch_install.wheel_tags import target_tags

    linux = target_tags(Machine(os="linux", arch="aarch64", python="3.13t", glibc="2.28"))
    assert "cp313-cp313t-manylinux_2_28_aarch64" in linux.tags
    assert "cp313-cp313-manylinux_2_28_aarch64" not in linux.tags
    assert "cp313-cp313t-manylinux_2_34_aarch64" not in linux.tags  # newer than the target's glibc
    assert "cp313-cp313t-manylinux2014_aarch64" in linux.tags
    mac = target_tags(Machine(os="macos", arch="arm64", python="3.12", os_version="14.5"))
    assert "cp312-none-macosx_14_0_arm64" in mac.tags and "cp312-none-macosx_15_0_arm64" not in mac.tags
    win = target_tags(Machine(os="windows", arch="x86_64", python="3.11"))
    assert "cp311-cp311-win_amd64" in win.tags and not any("linux" in t for t in win.tags)
    unknown_glibc = target_tags(Machine(os="linux", arch="x86_64", python="3.12"))
    assert "glibc unknown" in unknown_glibc.assumed[0]


def test_python_without_wheels_on_the_index_is_named_not_the_platform(httpserver, capsys, tmp_path):
    """Only cp312 wheels on this index: Python 3.11 gets the Python message, never 'no wheels for linux_x86_64'."""
    base = serve_index(httpserver, ONLY_CU134)
    code, plan, _ = plan_json(capsys, "--online", "--index-base", base, "--target", profile(tmp_path, python="3.11"))
    assert plan["choice"] is None
    messages = [w["message"] for w in plan["warnings"]]
    assert [w["code"] for w in plan["warnings"]] == ["python-unsupported"]
    assert messages == ["torch 2.16.0 has no wheels for Python 3.11 on linux_x86_64 (has 3.12)"]
    assert code == 4  # no build fits


def test_a_known_release_missing_the_targets_python_on_the_index_is_not_chosen(httpserver, capsys, tmp_path):
    """The embedded data lists cp311 wheels of 2.9.1; this index has only cp312 ones: the index decides."""
    rows = [parse_row(f"{v} torch-2.9.1+{v}-cp312-cp312-manylinux_2_28_x86_64.whl >=3.9") for v in ("cpu", "cu128")]
    base = serve_index(httpserver, rows)
    _, plan, _ = plan_json(capsys, "--online", "--index-base", base, "--target", profile(tmp_path, python="3.11"))
    assert plan["choice"] is None
    assert "torch 2.9.1 has no wheels for Python 3.11 on linux_x86_64 (has 3.12)" in plan["warnings"][0]["message"]


@pytest.mark.parametrize("older_cpu", [True, False])
def test_a_release_listed_only_as_a_gpu_build_is_never_pinned_as_cpu(httpserver, capsys, tmp_path, older_cpu):
    """An online release offered only as +cu134 must not become torch==X+cpu, a wheel the index lacks: the CPU
    build of an older release the index lists, or no choice."""
    rows = [*ONLY_CU134, parse_row("cpu torch-2.15.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl >=3.10")]
    base = serve_index(httpserver, rows if older_cpu else ONLY_CU134)
    cpu_only = tmp_path / "cpu.json"
    cpu_only.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}))
    code, plan, err = plan_json(capsys, "--online", "--index-base", base, "--target", str(cpu_only))
    (warning,) = [w for w in plan["warnings"] if w["code"] == "platform-unsupported"]
    assert "2.16.0 is listed for linux_x86_64 only as cu134, with no CPU build" in warning["message"]
    if older_cpu:
        assert code == 0 and (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.15.0", "cpu"), err
        assert warning["about"] == "newest" and not warning["blocking"]
        assert plan["upgrade"]["torch"] == "2.16.0" and "no CPU build" in plan["upgrade"]["why_not"]
    else:
        assert code == 4 and plan["choice"] is None and warning["blocking"]
