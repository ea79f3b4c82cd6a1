"""``--import-torch``: import torch in a child process of the inspected interpreter and run one tiny kernel.

The child has a timeout and its own process, so a native crash, a hang in driver initialisation or a
poisoned CUDA context is a finding about the install, never a crash or hang of the doctor.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Mapping
from types import MappingProxyType

from ..child_process import run_captured
from ..records import Record
from .checks import INSTALL_FIX, Finding

DEFAULT_TIMEOUT = 60.0
MARKER = "TORCH_INSTALL_DOCTOR_RESULT "

# Runs in the inspected interpreter; prints one marked JSON line. Keep it Python 3.8-compatible.
PROBE_SCRIPT = r"""
import json, sys, warnings
out = {"stage": "import"}
def emit():
    sys.stdout.write("\n" + MARKER + json.dumps(out) + "\n")
    sys.stdout.flush()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        import torch
        out["version"] = torch.__version__
        out["file"] = getattr(torch, "__file__", None)
        out["cuda_build"] = torch.version.cuda
        out["hip_build"] = getattr(torch.version, "hip", None)
        out["xpu_build"] = getattr(torch.version, "xpu", None)
        out["stage"] = "devices"
        backend = None
        if torch.cuda.is_available():
            backend = "cuda"
        elif hasattr(torch, "xpu") and torch.xpu.is_available():
            backend = "xpu"
        elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            backend = "mps"
        out["backend"] = backend
        out["cuda_available"] = bool(torch.cuda.is_available())
        if backend == "cuda":
            out["arch_list"] = torch.cuda.get_arch_list()
            out["devices"] = []
            for i in range(torch.cuda.device_count()):
                p = torch.cuda.get_device_properties(i)
                out["devices"].append({"name": p.name, "capability": "%d.%d" % (p.major, p.minor),
                                       "gcn_arch": getattr(p, "gcnArchName", None)})
        elif backend == "xpu":
            out["devices"] = [{"name": torch.xpu.get_device_name(i)} for i in range(torch.xpu.device_count())]
        if backend:
            out["stage"] = "kernel"
            x = torch.arange(8, dtype=torch.float32, device=backend)
            out["kernel_result"] = float((x * 2).sum().item())
        out["stage"] = "done"
    except BaseException as exc:
        text = str(exc).strip()
        out["error"] = "%s: %s" % (type(exc).__name__, text.splitlines()[0][:300] if text else "")
    out["warnings"] = [str(w.message).strip().splitlines()[0][:300] for w in caught if str(w.message).strip()]
emit()
""".replace("MARKER", repr(MARKER))


class RuntimeReport(Record):
    """What importing torch in a child process showed."""

    ok: bool
    facts: Mapping[str, object] = MappingProxyType({})
    findings: tuple[Finding, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"ok": self.ok, **self.facts}


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def import_torch(python: str, environ: Mapping[str, str], expect_gpu: bool,
                 timeout: float = DEFAULT_TIMEOUT) -> RuntimeReport:
    """Import torch with ``python`` (a normal start: PYTHONPATH, user site and LD_LIBRARY_PATH apply)."""
    argv = [python, "-c", PROBE_SCRIPT]
    try:
        done = run_captured(argv, timeout, env=environ, label=f"importing torch with {python}")
    except OSError as exc:
        return RuntimeReport(False, {"error": str(exc)}, (Finding(
            "import-torch-failed", "error", "could not start the interpreter to import torch", (str(exc),)),))
    if done.timed_out:
        return RuntimeReport(False, {"timed_out": True}, (Finding(
            "import-torch-hung", "error", f"`import torch` and a first kernel did not finish within {timeout:g} s",
            (f"{python} -c 'import torch …' was killed after {timeout:g} s",
             "a hang here is usually driver initialisation (persistence mode off, a wedged GPU) or a lock"),
            "check `nvidia-smi` / `dmesg` for a wedged GPU; retry with a longer --import-timeout"),))
    stdout = done.stdout
    stderr = done.stderr.strip().splitlines()
    line = next((ln for ln in reversed(stdout.splitlines()) if ln.startswith(MARKER)), None)
    returncode = done.returncode or 0
    if returncode < 0 or line is None:
        how = _signal_name(returncode) if returncode < 0 else f"exit code {returncode}"
        evidence = [f"the interpreter died ({how}) while importing torch or running a kernel"]
        evidence += [f"stderr: {ln[:300]}" for ln in stderr[-3:]]
        return RuntimeReport(False, {"returncode": done.returncode}, (Finding(
            "import-torch-crashed", "error", "importing torch crashed the interpreter", tuple(evidence),
            INSTALL_FIX),))
    try:
        facts = json.loads(line[len(MARKER):])
    except ValueError:
        facts = {"error": "unreadable answer from the child"}
    findings: list[Finding] = []
    warnings = [f"warning: {w}" for w in facts.get("warnings", [])]
    if facts.get("error") and facts.get("stage") == "import":
        findings.append(Finding("import-torch-failed", "error", "`import torch` fails",
                                (str(facts["error"]), *warnings), INSTALL_FIX))
    elif facts.get("error"):
        findings.append(Finding("kernel-failed", "error", "torch imports but a first GPU kernel fails",
                                (f"during {facts.get('stage')}: {facts['error']}", *warnings)))
    elif expect_gpu and not facts.get("backend"):
        findings.append(Finding("gpu-unavailable-at-runtime", "error", "torch imports but sees no GPU",
                                ("torch.cuda.is_available() is False and no XPU/MPS device is available",
                                 f"torch {facts.get('version')} (cuda {facts.get('cuda_build')}, "
                                 f"hip {facts.get('hip_build')}, xpu {facts.get('xpu_build')})", *warnings)))
    return RuntimeReport(not findings, facts, tuple(findings))
