"""Every command and flag the README and docs/*.md show is real: each `queuetop …` line of
a code block or inline code names a subcommand that exists and only flags that subcommand
takes (read from the real parser), each subcommand shown answers `--help`, every other
flag shown belongs to some command or bench script, and every link between the pages
leads to a file and a heading that exist. Placeholders (NAME, FILE, ID..., `…`) are
skipped; `--ROLE-values` stands for each role's flag."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from dashboard.cli import build_parser
from dashboard.config.presets import preset_names

pytestmark = pytest.mark.cli  # tier: see tests/conftest.py

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ROLES = ("ready", "scheduled", "running", "done", "failed", "dead")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
# the word queuetop as a command (a path before it allowed), not queuetop_demo or queuetop.audit_log
COMMAND = re.compile(r"(?:^|(?<=[\s(`$]))(?:[\w.~/-]*/)?queuetop(?=\s)")
SHELL_BREAK = re.compile(r"\s(?:&&|\|\|?)\s|;\s|\s#")  # where one shell command ends
FLAG = re.compile(r"^--?[A-Za-z][\w-]*")


@dataclass
class Shown:
    """One command line as a page shows it."""

    where: str  # file:line
    text: str
    words: list[str]
    row_flags: list[str] = field(default_factory=list)  # flags of its table row's other cells


@dataclass
class Pages:
    commands: list[Shown] = field(default_factory=list)
    sub_commands: list[Shown] = field(default_factory=list)  # `watch --record FILE` in prose
    loose_flags: list[tuple[str, str]] = field(default_factory=list)  # (where, flag)
    bench_lines: list[tuple[str, str, str]] = field(default_factory=list)  # where, script, text


@cache
def parser() -> argparse.ArgumentParser:
    return build_parser()


def subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [action] = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def options(p: argparse.ArgumentParser) -> set[str]:
    return {o for a in p._actions for o in a.option_strings}


def positional_choices(p: argparse.ArgumentParser) -> set[str] | None:
    for a in p._actions:
        if not a.option_strings and a.choices and not isinstance(a, argparse._SubParsersAction):
            return set(a.choices)
    return None


@cache
def every_flag() -> frozenset[str]:
    found = options(parser())
    for sub in subparsers(parser()).values():
        found |= options(sub)
    return frozenset(found)


@cache
def bench_flags(script: str | None = None) -> frozenset[str]:
    """The flags a bench script defines (all of them when no script is named)."""
    files = [ROOT / script] if script else sorted((ROOT / "bench").glob("*.py"))
    text = "".join(f.read_text() for f in files)
    return frozenset(re.findall(r"add_argument\(\s*\"(--[\w-]+)\"", text))


def placeholder(word: str) -> bool:
    """NAME, FILE, ID..., COMMAND, `…`: words a reader replaces."""
    bare = word.strip("[]()<>.…,")
    return not bare or bare.upper() == bare and any(c.isalpha() for c in bare) or "…" in word


def expand(flag: str) -> list[str]:
    """`--ROLE-values` is each role's flag; any other uppercase flag is a placeholder."""
    if "ROLE" in flag:
        return [flag.replace("ROLE", role) for role in ROLES]
    return [] if any(c.isupper() for c in flag) else [flag]


def flags_in(words: list[str]) -> list[str]:
    out = []
    for word in words:
        for part in word.split("/"):  # `--since/--until`
            m = FLAG.match(part.strip("[]()"))
            if m and m.group(0).startswith("--"):
                out += expand(m.group(0))
    return out


def split_words(text: str) -> list[str]:
    text = text.replace("\\|", "|").replace("\\\n", " ")
    try:
        words = shlex.split(text, comments=False)
    except ValueError:  # a quote a line of prose left open
        words = text.split()
    # `[--json]`, `(queuetop init-audit)`, `ID...,`: the word without its brackets and stops
    return [w for part in words for w in [part.strip("[]").rstrip("),;")] if w]


def command_lines(code: str) -> list[str]:
    """The `queuetop …` commands in a piece of code, each up to where its shell command ends."""
    out = []
    for m in COMMAND.finditer(code):
        rest = code[m.end() :]
        stop = SHELL_BREAK.search(rest)
        out.append(rest[: stop.start()] if stop else rest)
    return out


def logical_lines(code: str) -> list[tuple[int, str]]:
    """A block's lines, each with its continuation lines (`\\` at the end) joined to it."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for n, line in enumerate(code.split("\n")):
        start, text = pending if pending else (n, "")
        text += line
        if line.rstrip().endswith("\\"):
            pending = (start, text.rstrip()[:-1] + " ")
            continue
        pending = None
        out.append((start, text))
    return out


def read_pages() -> Pages:
    pages = Pages()
    names = set(subparsers(parser()))
    for doc in DOCS:
        text = doc.read_text()
        rel = doc.relative_to(ROOT)
        prose = text
        for block in FENCE.finditer(text):
            first = text.count("\n", 0, block.start(1)) + 1
            for n, line in logical_lines(block.group(1)):
                for cmd in command_lines(line):
                    pages.commands.append(Shown(f"{rel}:{first + n}", cmd, split_words(cmd)))
            prose = prose.replace(block.group(0), "\n" * block.group(0).count("\n"))
        for n, line in enumerate(prose.split("\n"), start=1):
            spans = re.findall(r"`([^`\n]+)`", line)
            row: Shown | None = None
            for i, span in enumerate(spans):
                where = f"{rel}:{n}"
                cmds = command_lines(" " + span)
                if cmds:
                    shown = Shown(where, span, split_words(cmds[0]))
                    pages.commands.append(shown)
                    if i == 0 and line.startswith("|"):
                        row = shown  # a table row about this command: its cells' flags too
                    continue
                words = split_words(span)
                script = next((w for w in words if re.fullmatch(r"bench/\w+\.py", w)), None)
                if script:
                    pages.bench_lines.append((where, script, span))
                elif words and words[0] in names and flags_in(words[1:]):
                    pages.sub_commands.append(Shown(where, span, words))
                elif words and words[0].startswith("--"):
                    if row is not None:
                        row.row_flags += flags_in(words)
                    else:
                        pages.loose_flags += [(where, f) for f in flags_in(words)]
    return pages


@cache
def pages() -> Pages:
    return read_pages()


def check(shown: Shown) -> list[str]:
    """What is wrong with one command line as shown (nothing, for a real one)."""
    words = list(shown.words)
    top_flags = []
    while words and words[0].startswith("-"):
        top_flags.append(words.pop(0))
    wrong = [f"`queuetop {f}`: no such option" for f in top_flags if f not in options(parser())]
    if not words or placeholder(words[0]):
        return wrong
    name, args = words[0], words[1:]
    subs = subparsers(parser())
    if name not in subs:
        return [*wrong, f"`queuetop {name}`: no such command"]
    sub = subs[name]
    choices = positional_choices(sub)
    if choices and args and not args[0].startswith("-") and not placeholder(args[0]):
        wrong += [
            f"`queuetop {name} {c}`: not one of {sorted(choices)}"
            for c in args[0].split("|")
            if c not in choices
        ]
    for flag in flags_in(args) + shown.row_flags:
        if flag not in options(sub):
            wrong.append(f"`queuetop {name}` takes no {flag}")
    for before, value in zip(args, args[1:], strict=False):
        if before == "--preset" and not placeholder(value) and value not in preset_names():
            wrong.append(f"`--preset {value}`: no such preset")
    return wrong


def test_the_pages_show_commands():
    """The parser of the pages finds what they show (else every check below is empty)."""
    shown = pages()
    assert len(shown.commands) > 80, len(shown.commands)
    subs = {s.words[0] for s in shown.commands if s.words and not placeholder(s.words[0])}
    assert {"demo", "watch", "discover", "requeue", "record", "check", "db"} <= subs
    assert any(s.row_flags for s in shown.commands), "table rows' flags are read"
    assert shown.sub_commands and shown.loose_flags and shown.bench_lines


def test_every_command_and_flag_shown_is_real():
    wrong = [
        f"{s.where}: {w}   ({s.text.strip()[:80]})" for s in pages().commands for w in check(s)
    ]
    assert not wrong, "\n".join(wrong)


def test_commands_named_in_prose_take_their_flags():
    """`watch --record FILE`, `snapshot --exact`: a subcommand and its flags, without queuetop."""
    wrong = [f"{s.where}: {w}" for s in pages().sub_commands for w in check(s)]
    assert not wrong, "\n".join(wrong)


def test_every_other_flag_shown_belongs_to_a_command_or_a_bench():
    known = every_flag() | bench_flags()
    wrong = [f"{where}: {flag}" for where, flag in pages().loose_flags if flag not in known]
    assert not wrong, "flags no command takes:\n" + "\n".join(wrong)
    for where, script, text in pages().bench_lines:
        assert (ROOT / script).exists(), f"{where}: {script} does not exist"
        extra = set(flags_in(split_words(text))) - bench_flags(script)
        assert not extra, f"{where}: {script} takes no {sorted(extra)}"


def test_a_flag_that_does_not_exist_is_caught():
    """The check itself: a made-up flag, command, choice or preset is named."""
    for text, says in [
        ("queuetop watch --no-such-flag", "takes no --no-such-flag"),
        ("queuetop requeue --older 5m", "takes no --older"),  # argparse would accept it
        ("queuetop frobnicate --json", "no such command"),
        ("queuetop db start|restart", "db restart"),
        ("queuetop watch --preset no-such-library", "no such preset"),
    ]:
        [cmd] = command_lines(text)
        assert any(says in w for w in check(Shown("test", cmd, split_words(cmd)))), text
    assert check(Shown("test", "", split_words("watch --preset NAME --queue FILE"))) == []
    assert check(Shown("test", "", split_words("snapshot --ROLE-values V"))) == []


def queuetop_command() -> list[str]:
    script = Path(sys.executable).with_name("queuetop")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from dashboard.cli import main; sys.exit(main())"]


def subcommands_shown() -> list[str]:
    found = {s.words[0] for s in pages().commands if s.words and not placeholder(s.words[0])}
    return sorted(found & set(subparsers(parser())))


def test_each_command_shown_answers_help():
    """`queuetop COMMAND --help` exits 0 and prints its usage, run as a user runs it."""
    runs = [[], *[[name] for name in subcommands_shown()]]

    def run(args: list[str]) -> tuple[list[str], subprocess.CompletedProcess]:
        done = subprocess.run(
            [*queuetop_command(), *args, "--help"], capture_output=True, text=True, timeout=60
        )
        return args, done

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, runs))
    assert len(results) > 15
    for args, done in results:
        usage = " ".join(["usage: queuetop", *args])
        assert done.returncode == 0 and done.stdout.startswith(usage), (args, done.stderr)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    prose = FENCE.sub("", doc.read_text())
    return {slug(m) for m in re.findall(r"^#{1,6} (.+)$", prose, re.M)}


def test_every_link_between_the_pages_leads_somewhere():
    wrong = []
    for doc in DOCS:
        prose = FENCE.sub("", doc.read_text())
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"\w+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve() if path else doc
            if not file.exists():
                wrong.append(f"{doc.relative_to(ROOT)}: {target}: no such file")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                wrong.append(f"{doc.relative_to(ROOT)}: {target}: no such heading")
    assert not wrong, "\n".join(wrong)


def test_the_readme_is_a_front_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 250
    for command in (
        "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/queuetop demo",
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest",
    ):
        assert f"```sh\n{command}\n```" in readme, command
    for page in DOCS[1:]:
        assert f"(docs/{page.name})" in readme, f"the README does not link {page.name}"


def test_ci_runs_the_readme_test_command():
    """.ci/run makes the venv and runs the suite as the README's test command does."""
    ci = (ROOT / ".ci" / "run").read_text()
    for part in ("python3 -m venv .venv", ".venv/bin/pip install -e '.[test]'"):
        assert part in ci, part
    assert re.search(r"^\.venv/bin/python -m pytest\b", ci, re.M)


def test_the_readme_presets_exist_and_the_adapters_table_keeps_its_columns():
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Library adapters", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"^\| [^|]+ \| `([\w-]+)` \|$", table, re.M)
    assert len(named) >= 15 and set(named) <= set(preset_names()), named
    adapters = (ROOT / "docs" / "adapters.md").read_text()
    header = (
        "| library | versions supported (schema marker) | tested | what maps to what "
        "| liveness signal (default threshold) | recovery |"
    )
    assert header in adapters
    rows = adapters.split(header, 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert len(rows) >= 15 and all(r.count(" | ") == 5 for r in rows), rows
