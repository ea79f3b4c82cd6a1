"""`torch-install completion bash|zsh|fish`: a shell completion script, printed (as pip does), made from the
parser itself so it never falls behind the commands and flags. No dependency, nothing installed."""

from __future__ import annotations

import argparse
import shlex

from . import common

SHELLS = ("bash", "zsh", "fish")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("completion", help="print a shell completion script (bash, zsh or fish)",
                            description="Print a completion script for a shell. Load it with: "
                                        "bash: eval \"$(torch-install completion bash)\"; "
                                        "zsh: eval \"$(torch-install completion zsh)\"; "
                                        "fish: torch-install completion fish | source")
    parser.add_argument("shell", choices=SHELLS)
    parser.set_defaults(func=run)


def _commands() -> dict[str, list[tuple[list[str], list[str], str]]]:
    """Each command: its options as (option strings, choices, help)."""
    from . import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found: dict[str, list[tuple[list[str], list[str], str]]] = {}
    for name, command in sub.choices.items():
        options = []
        for action in command._actions:
            if action.option_strings:
                choices = [str(c) for c in action.choices] if action.choices else []
                if "--format" in action.option_strings and not choices:
                    from ..render import FORMATS

                    choices = list(FORMATS)
                options.append((list(action.option_strings), choices, (action.help or "").split("(")[0].strip()))
        found[name] = options
    return found


def bash(commands: dict[str, list[tuple[list[str], list[str], str]]]) -> str:
    cases = []
    for name, options in commands.items():
        words = " ".join(s for strings, _, _ in options for s in strings)
        values = [f"{s}) COMPREPLY=($(compgen -W {shlex.quote(' '.join(c))} -- \"$cur\")); return;;"
                  for strings, c, _ in options if c for s in strings]
        cases.append(f"    {name})\n      case \"$prev\" in\n        " + "\n        ".join(values or ["*) ;;"])
                     + f"\n      esac\n      COMPREPLY=($(compgen -W {shlex.quote(words)} -- \"$cur\"));;")
    names = " ".join(commands)
    return ("# torch-install completion for bash: eval \"$(torch-install completion bash)\"\n"
            "_torch_install() {\n"
            "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} command=${COMP_WORDS[1]}\n"
            f"  if [ \"$COMP_CWORD\" -eq 1 ]; then COMPREPLY=($(compgen -W {shlex.quote(names)} -- \"$cur\")); "
            "return; fi\n"
            "  case \"$command\" in\n" + "\n".join(cases) + "\n  esac\n}\n"
            "complete -o default -F _torch_install torch-install\n")


def zsh(commands: dict[str, list[tuple[list[str], list[str], str]]]) -> str:
    return ("# torch-install completion for zsh: eval \"$(torch-install completion zsh)\"\n"
            "autoload -U +X bashcompinit && bashcompinit\n" + bash(commands).split("\n", 1)[1])


def fish(commands: dict[str, list[tuple[list[str], list[str], str]]]) -> str:
    lines = ["# torch-install completion for fish: torch-install completion fish | source",
             "complete -c torch-install -f"]
    for name in commands:
        lines.append(f"complete -c torch-install -n __fish_use_subcommand -a {name}")
    for name, options in commands.items():
        for strings, choices, text in options:
            flags = " ".join(f"-l {s[2:]}" if s.startswith("--") else f"-s {s[1:]}" for s in strings)
            values = f" -r -a {shlex.quote(' '.join(choices))}" if choices else ""
            described = f" -d {shlex.quote(text[:60])}" if text else ""
            lines.append(f"complete -c torch-install -n '__fish_seen_subcommand_from {name}' {flags}{values}"
                         f"{described}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    common.write({"bash": bash, "zsh": zsh, "fish": fish}[args.shell](_commands()))
    return 0
