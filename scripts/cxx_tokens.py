#!/usr/bin/env python3
"""The C++/CUDA token sequence of source files, comments dropped, for proving that a reformat
changed only whitespace (scripts/format.sh --verify, tests/static/mutations_survive_format.sh).

Whitespace that separates tokens matters (`>>>` is `>>` `>`, `> > >` is three tokens), so the
text with blanks removed is not enough: that check once let clang-format's `> > >` in a kernel
launch through. Prints one digest per file (or the tokens with --list).

    python3 scripts/cxx_tokens.py FILE...            # "<sha256>  FILE" per file
    python3 scripts/cxx_tokens.py --list FILE        # one token per line
"""
from __future__ import annotations

import argparse
import hashlib
import re
import sys

PUNCT = [">>=", "<<=", "->*", "...", "<=>", "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
         "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##", ".*"]
TOKEN = re.compile(
    r'(?P<comment>//[^\n]*|/\*.*?\*/)'
    r'|(?P<raw>R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)")'
    r'|(?P<string>(?:u8|[uUL])?"(?:\\.|[^"\\\n])*")'
    r"|(?P<char>(?:u8|[uUL])?'(?:\\.|[^'\\\n])+')"
    r"|(?P<number>\.?[0-9](?:[eEpP][+-]|[\w.']|)*)"
    r'|(?P<ident>[A-Za-z_]\w*)'
    r'|(?P<punct>' + '|'.join(re.escape(p) for p in PUNCT) + r'|\S)'
    r'|(?P<space>\s+)', re.S)


def tokens(text: str) -> list[str]:
    text = text.replace("\\\r\n", "").replace("\\\n", "")  # line splices
    out = []
    for m in TOKEN.finditer(text):
        if m.lastgroup not in ("comment", "space", "delim"):
            out.append(m.group(0))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="cxx_tokens.py", description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="print the tokens of one file, one per line")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    for f in args.files:
        with open(f, encoding="utf-8", errors="surrogateescape") as fh:
            toks = tokens(fh.read())
        if args.list:
            print("\n".join(toks))
        else:
            print(hashlib.sha256("\x00".join(toks).encode("utf-8", "surrogateescape")).hexdigest(), f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
