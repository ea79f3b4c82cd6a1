#!/usr/bin/env python3
"""Copy pixi's manifest JSON Schema out of a git copy of prefix-dev/pixi, for the tests that hold the
``--format pixi`` output to it.

    python scripts/capture_pixi_schema.py GITDIR     # writes tests/fixtures/pixi/schema.json and source.json

The schema is data (pixi's own description of ``pixi.toml``, BSD-3-Clause), copied as it is but for its
``examples`` annotations, which validate nothing (and name package registries by host); ``source.json`` names the
commit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pixi"


def without_examples(node: object) -> object:
    """The schema without its ``examples`` keywords (JSON Schema's annotations: they constrain nothing)."""
    if isinstance(node, dict):
        return {key: without_examples(value) for key, value in node.items() if key != "examples"}
    if isinstance(node, list):
        return [without_examples(item) for item in node]
    return node


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    gitdir = Path(argv[0])
    gitdir = gitdir / ".git" if (gitdir / ".git").is_dir() else gitdir

    def git(*args: str) -> str:
        return subprocess.run(["git", "--git-dir", str(gitdir), *args], check=True, capture_output=True,
                              text=True).stdout

    commit, date = git("log", "-1", "--format=%H %cI", "HEAD").split()
    OUT.mkdir(parents=True, exist_ok=True)
    schema = without_examples(json.loads(git("show", f"{commit}:schema/schema.json")))
    (OUT / "schema.json").write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    (OUT / "source.json").write_text(json.dumps({"url": "https://github.com/prefix-dev/pixi/blob/main/schema/"
                                                 "schema.json", "commit": commit, "date": date}, indent=1) + "\n",
                                     encoding="utf-8")
    print(f"wrote {OUT / 'schema.json'} (pixi {commit[:10]}, {date})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
