"""scripts/cxx_tokens.py, the proof that a reformat changed only whitespace: blanks and comments
are free, a split operator is not (clang-format once turned a launch's >>> into > > >)."""
from __future__ import annotations

import cxx_tokens


def test_whitespace_and_comments_are_free() -> None:
    a = "kernel<<<g, b, 0, s>>>(x, y);  // launch\nint  z=a+b; /* c */"
    b = "kernel <<< g,b,0,s >>> ( x ,\n   y ) ;\nint z = a + b;"
    assert cxx_tokens.tokens(a) == cxx_tokens.tokens(b)


def test_split_operators_and_changed_literals_are_caught() -> None:
    assert cxx_tokens.tokens("k<<<g, b>>>(x);") != cxx_tokens.tokens("k<<<g, b> > >(x);")
    assert cxx_tokens.tokens("a >>= 1;") != cxx_tokens.tokens("a >> = 1;")
    assert cxx_tokens.tokens('f("a b");') != cxx_tokens.tokens('f("a  b");')
    assert cxx_tokens.tokens("x = 1e-5;") == ["x", "=", "1e-5", ";"]


def test_raw_strings_splices_and_directives() -> None:
    assert cxx_tokens.tokens('R"x(a // not a comment)x"') == ['R"x(a // not a comment)x"']
    assert cxx_tokens.tokens("#define A \\\n  1") == cxx_tokens.tokens("#define A 1")
    assert cxx_tokens.tokens("#include <a/b.h>") == ["#", "include", "<", "a", "/", "b", ".", "h", ">"]
