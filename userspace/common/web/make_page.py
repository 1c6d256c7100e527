#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Builds a flame-graph page from the template and a data object.

  make_page.py TEMPLATE DATA.json OUT.html

The data format is described in FORMAT.md next to this file. As a module:
make_page(template_text, data_obj) returns the page's text."""
import json
import sys

MARKER = "/*JSAMPLED_DATA*/null"


def make_page(template_text, data_obj):
    """The template with its one marker replaced by data_obj as JSON.

    Every "<" is written as \\u003c so no "</script>" (or "<!--") can end
    or confuse the page's script element."""
    count = template_text.count(MARKER)
    assert count == 1, "template must contain %r exactly once, found %d" % (MARKER, count)
    payload = json.dumps(data_obj, ensure_ascii=False, separators=(",", ":"))
    # U+2028/2029 are legal in JSON but ended string literals in old JS.
    payload = (payload.replace("<", "\\u003c")
               .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return template_text.replace(MARKER, payload, 1)


def main(argv):
    if len(argv) != 4:
        sys.stderr.write("usage: make_page.py TEMPLATE DATA.json OUT.html\n")
        return 2
    with open(argv[1], encoding="utf-8") as f:
        template = f.read()
    with open(argv[2], encoding="utf-8") as f:
        data = json.load(f)
    page = make_page(template, data)
    with open(argv[3], "w", encoding="utf-8") as f:
        f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
