#!/usr/bin/env python3
"""Every relative link of README.md and docs/*.md leads somewhere: the file or folder it names
exists, and an anchor (`page.md#heading`, `#heading`) names a heading of that page as GitHub
makes its anchors. Links to other sites (http:, https:, mailto:) are not followed. Links in
code (fenced blocks, `inline code`) are not links.

  check_links.py ROOT     exit 0 when every link holds; else one line per broken link, exit 1
"""
import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]: *<?([^\s>]+)>?(?: +\"[^\"]*\")? *$", re.MULTILINE)
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def prose(path):
    """The page's text with fenced code blocks blanked and inline code removed, lines kept in
    place (so that an offset still tells its line)."""
    fence, lines = None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = FENCE.match(line)
            if m:
                fence = None if fence == m.group(1) else (fence or m.group(1))
                lines.append("")
            else:
                lines.append("" if fence else CODE_SPAN.sub("", line.rstrip("\n")))
    return "\n".join(lines)


def github_anchor(heading):
    """The anchor GitHub gives a heading: its text without markup, lower case, punctuation
    dropped (letters, digits, '-', '_' and spaces kept), spaces as '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors_of(path, cache={}):
    if path not in cache:
        seen, anchors = {}, set()
        fence = None
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = FENCE.match(line)
                if m:
                    fence = None if fence == m.group(1) else (fence or m.group(1))
                    continue
                h = HEADING.match(line) if fence is None else None
                if h:
                    base = github_anchor(h.group(2))
                    n = seen.get(base, 0)
                    seen[base] = n + 1
                    anchors.add(base if n == 0 else f"{base}-{n}")
        cache[path] = anchors
    return cache[path]


def broken_links(root, page):
    """One message per link of `page` (relative to `root`) that leads nowhere."""
    path = os.path.join(root, page)
    text = prose(path)
    found = [(m.start(), m.group(1)) for m in LINK.finditer(text)]
    found += [(m.start(), m.group(1)) for m in REFERENCE.finditer(text)]
    messages = []
    for offset, target in sorted(found):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # another site
            continue
        file_part, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        where = f"{page}:{text.count(chr(10), 0, offset) + 1}: {target}"
        if not os.path.exists(resolved):
            messages.append(f"{where}: no such file or folder ({os.path.relpath(resolved, root)})")
        elif anchor and resolved.endswith(".md") and anchor not in anchors_of(resolved):
            messages.append(f"{where}: no heading #{anchor} in {os.path.relpath(resolved, root)}")
    return messages


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    root = sys.argv[1]
    docs = os.path.join(root, "docs")
    pages = ["README.md"] + sorted(
        os.path.join("docs", name) for name in os.listdir(docs) if name.endswith(".md"))
    broken = [m for page in pages for m in broken_links(root, page)]
    for message in broken:
        print(message)
    if broken:
        print(f"links: {len(broken)} broken in {len(pages)} pages")
        return 1
    print(f"links: every relative link of {len(pages)} pages holds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
