#!/usr/bin/env python3
"""The docs' lists of the engine's options are the ones `pleshard help-options` makes from the
library's table (lib/job/engine_option_table): docs/cli.md's table and docs/python.md's
keywords, each between `<!-- options: WHAT -->` and `<!-- end options -->`. Fails naming the
page that differs, with a diff; --write puts the generated text in place.

    check_options.py PLESHARD ROOT [--write]"""

import difflib
import pathlib
import subprocess
import sys

PAGES = {"cli": "docs/cli.md", "python": "docs/python.md"}
END = "<!-- end options -->"


def main():
    app, root = sys.argv[1], pathlib.Path(sys.argv[2])
    write = "--write" in sys.argv[3:]
    stale = []
    for what, page in PAGES.items():
        path = root / page
        text = path.read_text()
        begin = f"<!-- options: {what} -->\n"
        if begin not in text or END not in text:
            print(f"{page}: no {begin.strip()} ... {END} block", file=sys.stderr)
            stale.append(page)
            continue
        start = text.index(begin) + len(begin)
        end = text.index(END, start)
        generated = subprocess.run([app, "help-options", what], check=True, capture_output=True, text=True).stdout
        if text[start:end] == generated:
            continue
        if write:
            path.write_text(text[:start] + generated + text[end:])
            continue
        stale.append(page)
        diff = difflib.unified_diff(text[start:end].splitlines(), generated.splitlines(), f"{page} (committed)",
                                    f"pleshard help-options {what}", lineterm="")
        print("\n".join(diff), file=sys.stderr)
    if stale:
        print(f"options: {', '.join(stale)} differ from the option table; regenerate with "
              f"tests/docs/check_options.py build/bin/pleshard . --write", file=sys.stderr)
        return 1
    print(f"options: {len(PAGES)} pages list the option table's options")
    return 0


if __name__ == "__main__":
    sys.exit(main())
