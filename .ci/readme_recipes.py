#!/usr/bin/env python3
"""The README's table of `just` recipes, generated from the Justfile.

Each recipe of the Justfile has a doc comment: the comment line right above it, the one
`just --list` shows. This script renders one table row per recipe (its name and
parameters, then that line) and puts the table between the README's two marker lines.

    python3 .ci/readme_recipes.py            # rewrite the table in README.md
    python3 .ci/readme_recipes.py --check    # exit 1, with a diff, when it is out of date

Exit status: 0 when the table is (or now is) up to date, 1 when `--check` finds it out of
date, 2 when the Justfile or the README cannot be read as expected (a recipe without a doc
comment, a marker missing). Standard library only; `.ci/steps/lint.sh` runs `--check`.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "<!-- recipes: generated from the Justfile by .ci/readme_recipes.py; do not edit by hand -->"
END = "<!-- end of recipes -->"

# A recipe's first line: its name at column 0, its parameters, a colon that is not `:=`.
RECIPE = re.compile(r"^(?P<name>@?[A-Za-z_][A-Za-z0-9_-]*)(?P<params>(?:\s+[^:]*?)?)\s*:(?!=)")
# Lines at column 0 that are not recipes: settings, aliases, exports, imports, assignments.
NOT_RECIPE = re.compile(r"^(set|alias|export|import|mod)\b|^[A-Za-z_][A-Za-z0-9_-]*\s*:=")


class RecipeError(Exception):
    """The Justfile or the README is not in the shape this script renders from."""


@dataclass(frozen=True)
class Recipe:
    """One recipe: its name, its parameters as written, and its doc comment."""

    name: str
    params: tuple[str, ...]
    doc: str

    def usage(self) -> str:
        """`just NAME PARAM...`, a variadic parameter as `[ARGS...]`, a defaulted one in brackets."""
        words = ["just", self.name]
        for param in self.params:
            if param.startswith("*"):
                words.append(f"[{param[1:]}...]")
            elif param.startswith("+"):
                words.append(f"{param[1:]}...")
            elif "=" in param:
                words.append(f"[{param.split('=', 1)[0]}]")
            else:
                words.append(param.lstrip("$"))
        return " ".join(words)


def parse_justfile(text: str, origin: str) -> list[Recipe]:
    """Every recipe of the Justfile in order, each with the comment line right above it."""
    recipes: list[Recipe] = []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line or line[0] in " \t#[" or NOT_RECIPE.match(line):
            continue
        match = RECIPE.match(line)
        if match is None:
            continue
        name = match.group("name").lstrip("@")
        index = number - 2
        while index >= 0 and lines[index].startswith("["):  # attributes: [private], [doc(..)]
            if lines[index].strip() == "[private]":
                name = ""
            index -= 1
        if not name or name.startswith("_"):  # what `just --list` hides
            continue
        above = lines[index] if index >= 0 else ""
        if not above.startswith("#") or not above.lstrip("#").strip():
            raise RecipeError(
                f"{origin}:{number}: recipe `{name}` has no doc comment on the line above it"
            )
        doc = above.lstrip("#").strip()
        params = tuple(match.group("params").split())
        recipes.append(Recipe(name, params, doc))
    if not recipes:
        raise RecipeError(f"{origin}: no recipe found")
    return recipes


def render(recipes: list[Recipe]) -> list[str]:
    """The table's lines: a header, then one row per recipe in the Justfile's order."""
    rows = ["| recipe | what it does |", "|---|---|"]
    for recipe in recipes:
        doc = recipe.doc.replace("|", "\\|")
        rows.append(f"| `{recipe.usage()}` | {doc} |")
    return rows


def splice(readme: str, table: list[str], origin: str) -> str:
    """The README with the lines between its markers replaced by the table."""
    lines = readme.splitlines()
    try:
        begin = lines.index(BEGIN)
        end = lines.index(END, begin + 1)
    except ValueError:
        raise RecipeError(
            f"{origin}: the marker lines are missing (each on a line of its own, in order):\n"
            f"  {BEGIN}\n  {END}"
        ) from None
    updated = lines[: begin + 1] + table + lines[end:]
    return "\n".join(updated) + ("\n" if readme.endswith("\n") else "")


def main(argv: list[str]) -> int:
    """Render or check the table; the exit status is the module doc's."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the table is out of date")
    parser.add_argument("--justfile", type=Path, default=ROOT / "Justfile")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    args = parser.parse_args(argv)
    try:
        recipes = parse_justfile(args.justfile.read_text(encoding="utf-8"), str(args.justfile))
        readme = args.readme.read_text(encoding="utf-8")
        updated = splice(readme, render(recipes), str(args.readme))
    except (OSError, RecipeError) as err:
        print(f"readme_recipes: {err}", file=sys.stderr)
        return 2
    if updated == readme:
        return 0
    if args.check:
        diff = difflib.unified_diff(
            readme.splitlines(keepends=True),
            updated.splitlines(keepends=True),
            fromfile=f"{args.readme} (as it is)",
            tofile=f"{args.readme} (from {args.justfile})",
        )
        sys.stderr.writelines(diff)
        print(
            f"readme_recipes: the recipe table in {args.readme} differs from {args.justfile}; "
            "run python3 .ci/readme_recipes.py",
            file=sys.stderr,
        )
        return 1
    args.readme.write_text(updated, encoding="utf-8")
    print(f"readme_recipes: rewrote the recipe table in {args.readme} ({len(recipes)} recipes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
