"""What the resolver returns: the chosen build, why, what was rejected, and warnings with stable codes.

The JSON form (``Plan.to_dict``, with the commands of ``steps.command_lines``: ``render.plan.plan_document``) is
a documented contract: docs/plan-json.md. How a plan is installed, step by step, is ``steps.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..machine import Machine
from ..records import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from .companion_facts import Pick

DEFAULT_INDEX_BASE = "https://download.pytorch.org/whl"

# The plan's warning codes, the one list the code reads (extend, never rename; docs/plan-json.md documents each).
# True: the warning means the chosen build does not run, or cannot be installed, on the machine ("blocking"):
# a fleet does not count such a machine as served, and the doctor's fix avoids such a build.
WARNING_CODES: Mapping[str, bool] = MappingProxyType({
    "driver-too-old": True,
    "driver-too-new": True,
    "driver-unknown": False,
    "gpu-arch-unsupported": True,
    "mixed-gpus": False,
    "no-gpu-variant-for-version": True,
    "python-unsupported": True,
    "platform-unsupported": True,
    "rocm-override-needed": False,
    "integrated-gpu-only": False,
    "gpu-arch-unknown": False,
    "rocm-driver-window": False,
    "constrained-by": False,
    "builds-from-source": False,
    "vendor-support-level": False,
    "requirement-unknown": False,
    "built-for-another-torch": False,
    "release-unknown": False,
    "hash-missing": False,
})


def check_code(code: str) -> str:
    """``code`` itself, or a ValueError: a warning code that is not in WARNING_CODES is a bug."""
    if code not in WARNING_CODES:
        raise ValueError(f"unknown plan warning code {code!r} (add it to WARNING_CODES and docs/plan-json.md)")
    return code


class Wanted(Record):
    """One requirement of the project other than the torch family's, as the user wrote it, and where from. (A
    compiled lock's are made as plain tuples, every field in order: ``requirements_file._lock_entries``.)"""

    text: str  # as written, without per-line options: "numpy<2", "xformers==0.0.32.post2", "./pkg", a URL
    name: str | None  # the canonical project name; None for a path or URL that names none
    origin: str  # "command line", "requirements.txt:12", "pyproject.toml: project.dependencies"
    hashes: tuple[str, ...] = ()  # its --hash options ("sha256:…")
    editable: bool = False  # -e
    constraint: bool = False  # from a -c file: limits versions, installs nothing
    via: tuple[str, ...] = ()  # the packages a compiled lock says need it ("# via torch")
    file: str | None = None  # the -r/-c file given on the command line it comes from (itself or by an include)
    base: str | None = None  # where a relative path in it starts: an environment.yml's or pixi.toml's directory, as
    # conda runs pip and pixi reads a path there (None: the working directory, as pip reads a requirements file)


class FileOption(Record):
    """An options line of a requirements file (``--extra-index-url URL``): honoured for the packages that ride
    along, never for the torch family, whose index torch-install chooses."""

    option: str  # the long form: "--extra-index-url"
    value: str | None
    origin: str  # "requirements.txt:3"
    file: str | None = None  # the -r/-c file given on the command line it comes from


class BuildSource(Record):
    """A build of a torch-family package the project's configuration names: an index whose URL names a variant
    (``[tool.uv.sources] torch = { index = "pytorch-cu118" }``), where its marker holds. The user's choice, as a
    local label is."""

    name: str
    variant: str  # "cu118"
    index_url: str  # "https://download.pytorch.org/whl/cu118"
    text: str  # what names it, in messages: '[tool.uv.sources] torch = { index = "pytorch-cu118" }'
    marker: str | None = None  # where it holds (None: everywhere) …
    unless: tuple[str, ...] = ()  # … and none of these does (the markers of the sources it stands in for) …
    cuda: str = ""  # … and the newest CUDA the machine's driver runs (0 without one) is in this PEP 440 range


class RequirementsSource(Record):
    """A ``-r``/``-c`` file the user gave."""

    path: str
    constraint: bool = False
    passthrough: bool = True  # given to the installer as it is (else its lines are written out one by one)


class Request(Record):
    """What the user asked for."""

    packages: tuple[str, ...] = ("torch",)  # PEP 508 requirement strings of the torch family, as given
    variant: str | None = None  # force one: "cu128", "cpu", "rocm6.4", "xpu"
    channel: str = "stable"  # stable | test | nightly
    index_base: str = DEFAULT_INDEX_BASE
    requirements: tuple[Wanted, ...] = ()  # everything else the project asks for, in order
    options: tuple[FileOption, ...] = ()  # options lines of the requirements files
    files: tuple[RequirementsSource, ...] = ()  # the -r/-c files given
    constraints: tuple[str, ...] = ()  # -c lines on the torch family: they limit its versions
    notes: tuple[str, ...] = ()  # what reading the sources found worth saying
    installer_options: tuple[str, ...] = ()  # given after "--": passed to every installer step
    vendor_build: bool = False  # the GPU vendor's own build (its index) first, where one serves the GPU
    vendor_indexes: tuple[tuple[str, str], ...] = ()  # (vendor index id, URL): a mirror of that index
    builds: tuple[BuildSource, ...] = ()  # the family's builds the project's configuration names
    conda: tuple[str, ...] = ()  # an environment.yml's conda packages other than the family's, as written
    torch_implied: bool = False  # no requirement names the family: torch comes with the packages built against it
    python: tuple[str, str] | None = None  # the Python an environment file makes its environment with: (its PEP 440
    # range, what names it), for a machine whose Python is this one's (``machine.environment_python``)

    @property
    def others(self) -> tuple[str, ...]:
        """The requirements that ride along, as written."""
        return tuple(w.text for w in self.requirements if not w.constraint)

    def to_dict(self) -> dict[str, Any]:
        return {"packages": list(self.packages), "variant": self.variant, "channel": self.channel,
                "index_base": self.index_base, "others": list(self.others),
                "requirements": [{"requirement": w.text, "name": w.name, "origin": w.origin, "editable": w.editable,
                                  "constraint": w.constraint, "hashes": len(w.hashes)} for w in self.requirements],
                "files": [{"path": f.path, "constraint": f.constraint, "passthrough": f.passthrough}
                          for f in self.files], "constraints": list(self.constraints),
                "installer_options": list(self.installer_options), "vendor_build": self.vendor_build,
                "vendor_indexes": dict(self.vendor_indexes),
                **({"builds": [b._asdict() for b in self.builds]} if self.builds else {})}


class PlanWarning(Record):
    """One warning: its code (``WARNING_CODES``), one line, and what it is about: the chosen build ("choice"), or
    the newest matching release and why it was passed over ("newest"). Only a blocking code about the choice
    means the chosen build does not run or install here."""

    code: str
    message: str
    about: str = "choice"  # choice | newest

    @property
    def blocking(self) -> bool:
        return self.about == "choice" and WARNING_CODES[self.code]


class Rejection(Record):
    variant: str
    torch: str
    reason: str


class VendorSource(Record):
    """The vendor index a build comes from (a row of data/vendor-builds.json)."""

    id: str  # "amd-stable"
    vendor: str  # "amd"
    name: str  # "AMD's stable ROCm index (whl-next)"
    channel: str = "stable"
    confidence: str = "unverified"  # of the index (its URL, what it serves)


class Device(Record):
    """A device extra of a vendor build and what it serves: the architecture (None for the all-devices extra),
    the GPUs, and the vendor's support level of the architecture on the OS (None where it rates none)."""

    extra: str | None  # "device-gfx1100"; None where the index has no extras (a Jetson index)
    arch: str | None
    gpus: tuple[str, ...]
    support: str | None = None


class Choice(Record):
    variant: str  # index variant id: cu128, rocm6.4, xpu, cpu; "default" for the default index (macOS)
    torch: str  # "2.9.1"
    index_url: str | None  # None: the default index
    packages: Mapping[str, str] = MappingProxyType({})  # name -> exact version (with local label)
    companions: tuple[Pick, ...] = ()  # requested packages built against torch, and where their builds come from
    # where the build comes from: pytorch-index, default-index, vendor-index (vendor_index says which)
    distribution: str = "pytorch-index"
    vendor_index: VendorSource | None = None
    extras: Mapping[str, tuple[str, ...]] = MappingProxyType({})  # the extras the build installs with, per package
    devices: tuple[Device, ...] = ()  # which GPUs each device extra serves (a vendor build)
    # name -> the direct reference that installs it (``torch @ URL``): the user's own wheel of the chosen build
    references: Mapping[str, str] = MappingProxyType({})

    def from_index(self) -> tuple[Pick, ...]:
        """The companions installed from the chosen build's index, with torch."""
        return tuple(p for p in self.companions if p.kind == "index")


class Need(Record):
    """One change that would let the newest matching release run (on the GPU): what, the machine's value, the
    value needed, and the words for it ("Python ≥ 3.11")."""

    what: str  # python | nvidia_driver | rocm | glibc | macos | os | libc
    have: str | None
    want: str  # ">=3.11", "<=3.14", ">=580.65.06", "sm_75 or newer", "linux", "glibc"
    text: str


class Upgrade(Record):
    """What it would take to get the newest matching release on the machine's GPU: the changes (``needs``) and,
    where no change to this machine gets it onto the GPU, why not (``why_not``). ``gpu`` False: the needs get
    the release installed, not onto a GPU (a machine without a GPU to use, or a release without code for it)."""

    torch: str
    gpu: bool
    needs: tuple[Need, ...] = ()
    why_not: str | None = None  # what no change here lifts, after "torch X" ("has no ROCm build for …")

    def text(self) -> str:
        """One line: "torch 2.15.0 on the GPU needs Python ≥ 3.11 and NVIDIA driver ≥ 580.65.06"."""
        if not self.needs:
            return f"torch {self.torch} {self.why_not or 'does not fit this machine'}"
        where = f"torch {self.torch}" + (" on the GPU" if self.gpu else "")
        items = [n.text for n in self.needs]
        joined = items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
        return f"{where} needs {joined}" + (f", and {self.why_not}" if self.why_not else "")

    def to_dict(self) -> dict[str, Any]:
        return {"torch": self.torch, "gpu": self.gpu, "why_not": self.why_not,
                "needs": [{"what": n.what, "from": n.have, "to": n.want, "text": n.text} for n in self.needs]}


class Plan(Record):
    machine: Machine
    request: Request
    choice: Choice | None
    gpu_accelerated: bool
    reasons: tuple[str, ...] = ()  # why this choice, one line each
    warnings: tuple[PlanWarning, ...] = ()
    rejected: tuple[Rejection, ...] = ()
    notes: tuple[str, ...] = ()  # caveats: facts the choice rests on that are inferred/unverified
    upgrade: Upgrade | None = None  # what would get the newest matching release (on the GPU); None: the choice is it

    def blocking_warnings(self) -> tuple[PlanWarning, ...]:
        """Warnings that mean the chosen build does not run (or cannot be installed) on the machine."""
        return tuple(w for w in self.warnings if w.blocking)

    def to_dict(self) -> dict[str, Any]:
        """The plan's fields in their JSON form; the Plan JSON adds the commands derived from them
        (``render.plan.plan_document``)."""
        choice = None
        if self.choice:
            choice = {"variant": self.choice.variant, "torch": self.choice.torch,
                      "index_url": self.choice.index_url, "packages": dict(self.choice.packages),
                      "companions": [{"name": p.name, "version": p.version, "from": p.kind,
                                      "requirement": p.requirement, "url": p.url} for p in self.choice.companions],
                      "distribution": self.choice.distribution,
                      "vendor_index": self.choice.vendor_index._asdict() if self.choice.vendor_index else None,
                      "extras": {name: list(extras) for name, extras in self.choice.extras.items()},
                      "devices": [d._asdict() for d in self.choice.devices]}
            if self.choice.references:
                choice["references"] = dict(self.choice.references)
        return {
            "choice": choice,
            "gpu_accelerated": self.gpu_accelerated,
            "reasons": list(self.reasons),
            "warnings": [{"code": w.code, "message": w.message, "about": w.about, "blocking": w.blocking}
                         for w in self.warnings],
            "rejected": [{"variant": r.variant, "torch": r.torch, "reason": r.reason} for r in self.rejected],
            "notes": list(self.notes),
            "upgrade": self.upgrade.to_dict() if self.upgrade else None,
            "machine": self.machine.to_dict(),
            "request": self.request.to_dict(),
        }
