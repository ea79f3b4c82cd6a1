#!/usr/bin/env python3
"""Capture the GPU of every GPU instance type from the cloud providers' own size documentation.

    python scripts/capture_cloud_gpus.py [--docs scripts/reference/cloud-docs] [-o scripts/reference/evidence/...]

``--docs`` holds the providers' pages (the committed copy: excerpts of them, each with its source in
``sources.json``):

- ``aws/*.md``: AWS's "Specifications for Amazon EC2 accelerated computing instances" page: each row of its
  performance table names an instance type and its accelerators ("8 x NVIDIA A100 GPU");
- ``aws-archive/*.md``: the archived Amazon EC2 user guide's accelerated computing page (awsdocs): each family's
  heading and sentence ("P3 instances use NVIDIA Tesla V100 GPUs") and its instance types' rows, for the types the
  current page no longer lists;
- ``azure/*.md``: Azure's size series pages (MicrosoftDocs/azure-compute-docs, older ones from
  MicrosoftDocs/azure-docs): the sizes of the series' table, and the GPU its specs' Accelerators row or its summary's
  sentence ("powered by …", "leverage the …", "… and four NVIDIA Blackwell B300 GPUs") names;
- ``gcp/*.md``: Google Cloud's "GPU machine types" page: per accelerator-optimized series, the sentence naming its
  GPUs ("have NVIDIA H200 SXM GPUs", "connected to four NVIDIA B200 Blackwell GPUs") and its machine types.

Only NVIDIA and AMD GPUs are kept. Writes ``evidence/cloud-gpus.json`` (provider -> size -> the accelerator as
documented), which ``scripts/audit_matrix.py`` checks the names table's instance type patterns against, both ways.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE / "reference" / "cloud-docs"
OUT = HERE / "reference" / "evidence" / "cloud-gpus.json"
GPU = re.compile(r"\b(NVIDIA|Nvidia|AMD)\b.*\bGPU", re.IGNORECASE)
# an accelerator a sentence names: the vendor, then words up to the model (a word with a digit), then "GPU(s)"
# ("NVIDIA Blackwell B300 GPUs", "NVIDIA GB200 Tensor Core GPUs"); a word "CPUs" ends the run
SENTENCE_GPU = re.compile(r"\b((?:NVIDIA|AMD)(?: (?!CPUs?\b)[A-Za-z]+)*? (?:RTX PRO [0-9]+|[A-Z]*[0-9][A-Za-z0-9]*))"
                          r"(?: [A-Z][A-Za-z]*)*? GPUs?\b")
# which of the names table's patterns each provider's documentation answers for (by the pattern's own text)
# (AWS's types have a dot: "p4d.24xlarge"; Google Cloud's a dash after the series: "a3-highgpu-8g")
SCOPE = {"aws": r"\\\.$", "azure": r"^\^Standard_", "gcp": r"^\^[a-z][a-z0-9]*-.*-$"}


def aws_sizes(text: str) -> dict[str, str]:
    """instance type -> accelerators, from the rows of the performance table ("<td>p5.48xlarge</td> … <td>8 x
    NVIDIA H100 GPU</td>")."""
    out = {}
    for row in re.findall(r"<tr>(.*?)</tr>", text, re.S):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        accelerators = next((m[1] for c in cells if (m := re.fullmatch(r"[0-9.]+ x (.+)", c))), None)
        if cells and accelerators and GPU.search(accelerators) and re.fullmatch(r"[a-z0-9-]+\.[a-z0-9]+", cells[0]):
            out[cells[0]] = accelerators
    return out


def aws_archive_sizes(text: str) -> dict[str, str]:
    """instance type -> GPU, from each family's sentence ("P2 instances use NVIDIA Tesla K80 GPUs", "These
    instances use …" under a heading naming one family) and the rows of its types ("| p2\\.xlarge | 4 | …")."""
    models: dict[str, str] = {}
    heading: list[str] = []
    for line in text.splitlines():
        if m := re.match(r"\*\*(.+?) instances\*\*", line):
            heading = [f.lower() for f in re.split(r"\s+and\s+", m[1])]
        for family, model in re.findall(r"(\w+|These) instances use ((?:NVIDIA|AMD) [A-Za-z0-9 ]*?[0-9][A-Za-z0-9]*) "
                                        r"GPUs", line.replace("\\", "")):
            families = heading if family == "These" and len(heading) == 1 else [family.lower()]
            for f in families:
                models[f] = f"{model} GPU"
    out = {}
    for family, size in re.findall(r"^\|\s*([a-z0-9-]+)\\?\.([a-z0-9]+)\s*\|", text, re.M):
        known = max((f for f in models if family.startswith(f)), key=len, default=None)  # p3dn: a P3 instance
        if known:
            out[f"{family}.{size}"] = models[known]
    return out


def azure_sizes(text: str) -> dict[str, str]:
    """size -> GPU of one series page: its sizes' rows ("| Standard_NC6s_v3 |"), and the GPU of its specs'
    Accelerators row, else of its "powered by" sentence."""
    row = re.search(r"^\|\s*Accelerators\s*\|[^|]*\|\s*([^|]*?)\s*\|", text, re.M)
    gpu = row[1] if row and row[1] else None
    powered = r"powered by (?:the )?(?:\d+ )?\[?((?:NVIDIA|AMD) [A-Za-z0-9 ]*?[0-9][A-Za-z0-9]*)"
    if gpu is None and (m := re.search(powered, text) or SENTENCE_GPU.search(" ".join(text.split()))):
        gpu = f"{m[1]} GPU"
    if gpu is None or not re.search(r"\b(NVIDIA|AMD)\b", gpu, re.IGNORECASE):
        return {}
    return {size: gpu for size in dict.fromkeys(re.findall(r"^\|\s*(Standard_[A-Za-z0-9_]+)\*?\s*\|", text, re.M))}


def gcp_sizes(text: str) -> dict[str, str]:
    """machine type -> GPU, from each series' section ("## A3 Ultra"): the GPU its sentence names, for the machine
    types it lists ("- a3-ultragpu-8g")."""
    out = {}
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        prose = " ".join(line for line in section.splitlines()[1:] if not line.startswith("- "))
        m = SENTENCE_GPU.search(" ".join(prose.split())) or re.search(r"\b([A-Z][0-9]{2,3}) [0-9]+GB GPUs\b", prose)
        if m:
            for size in re.findall(r"^- ([a-z0-9-]+)$", section, re.M):
                out[size] = f"{m[1]} GPU"
    return out


def capture(docs: Path) -> dict[str, object]:
    sources = json.loads((docs / "sources.json").read_text(encoding="utf-8"))
    providers: dict[str, dict[str, object]] = {}
    aws: dict[str, str] = {}
    for path in sorted((docs / "aws-archive").glob("*.md")):
        aws.update(aws_archive_sizes(path.read_text(encoding="utf-8")))
    for path in sorted((docs / "aws").glob("*.md")):  # the current page wins over the archive
        aws.update(aws_sizes(path.read_text(encoding="utf-8")))
    azure: dict[str, str] = {}
    for path in sorted((docs / "azure").glob("*.md")):
        azure.update(azure_sizes(path.read_text(encoding="utf-8")))
    gcp: dict[str, str] = {}
    for path in sorted((docs / "gcp").glob("*.md")):
        gcp.update(gcp_sizes(path.read_text(encoding="utf-8")))
    for name, sizes in (("aws", aws), ("azure", azure), ("gcp", gcp)):
        providers[name] = {"sources": {p: s for p, s in sources.items() if p.startswith(name)},
                           "sizes": dict(sorted(sizes.items()))}
    return {"providers": providers, "pattern_scope": SCOPE}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=DOCS)
    parser.add_argument("-o", "--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = capture(args.docs)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    counts = ", ".join(f"{n}: {len(p['sizes'])} sizes" for n, p in data["providers"].items())  # type: ignore
    print(f"wrote {args.output} ({counts})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
