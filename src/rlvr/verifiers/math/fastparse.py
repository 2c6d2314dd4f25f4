r"""A small parser for the forms most answers take, so they skip ANTLR (speed).

Integers, decimals, `\frac{}{}`, `\sqrt{}` and `\sqrt[n]{}`, `\pi`, one-letter
variables, `+ - \cdot \times * /`, implicit products (`2\sqrt{3}`, `4ac`), powers
(`x^2`, `(x+1)^{-1}`) and brackets. Anything else (functions, `e`, `i`, relations,
mixed numbers such as `2\frac{1}{2}`) returns None and goes to latex2sympy, which
reads the same forms the same way: the two agree on every form accepted here.

Trees are built unevaluated (`evaluate=False`), as latex2sympy builds them, so
`9^{9^{9}}` is never computed here; `symbolic.to_sympy` bounds its size afterwards.
Recursive descent over a token list: linear in the input, and the depth is bounded
by the nesting check that runs before any parse.
"""

from __future__ import annotations

import re
from typing import Any

import sympy

_TOKEN_RE = re.compile(r"\\[a-zA-Z]+|\d+\.\d+|\d+|\.\d+|[a-zA-Z]|[-+*/^(){}\[\]]|\s+")
_COMMANDS = frozenset({"\\frac", "\\sqrt", "\\pi", "\\cdot", "\\times"})
# Letters latex2sympy reads as constants or that sympy reserves.
_NOT_VARIABLES = frozenset("eiEIS")
_PRODUCT_OPS = frozenset({"\\cdot", "\\times", "*"})
_FACTOR_START = frozenset({"(", "{", "\\frac", "\\sqrt", "\\pi"})


class _Unsupported(Exception):
    """A form this parser leaves to latex2sympy."""


def _tokens(s: str) -> list[str] | None:
    out: list[str] = []
    pos = 0
    while pos < len(s):
        m = _TOKEN_RE.match(s, pos)
        if m is None:
            return None
        tok = m.group(0)
        pos = m.end()
        if tok.isspace():
            continue
        if tok.startswith("\\") and tok not in _COMMANDS:
            return None
        if len(tok) == 1 and tok.isalpha() and tok in _NOT_VARIABLES:
            return None
        out.append(tok)
    return out


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.toks = tokens
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise _Unsupported(f"expected {expected}")
        self.i += 1
        return tok

    def expr(self) -> Any:
        terms = [self.term()]
        while self.peek() in ("+", "-"):
            sign = self.take()
            term = self.term()
            terms.append(sympy.Mul(-1, term, evaluate=False) if sign == "-" else term)
        return terms[0] if len(terms) == 1 else sympy.Add(*terms, evaluate=False)

    def term(self) -> Any:
        value = self.unary()
        divided = False
        while True:
            tok = self.peek()
            if tok in _PRODUCT_OPS:
                self.take()
                value = sympy.Mul(value, self.unary(), evaluate=False)
            elif tok == "/":
                self.take()
                divided = True
                value = sympy.Mul(value, sympy.Pow(self.unary(), -1, evaluate=False), evaluate=False)
            elif tok is not None and (tok in _FACTOR_START or tok.isalnum() or tok[0] == "."):
                self._implicit_product_allowed(tok, self.toks[self.i - 1], divided)
                value = sympy.Mul(value, self.power(), evaluate=False)
            else:
                return value

    @staticmethod
    def _implicit_product_allowed(tok: str, before: str, divided: bool) -> None:
        """Raise where latex2sympy reads a juxtaposition otherwise than as a product."""
        if tok[0].isdigit() or tok[0] == ".":
            raise _Unsupported("a number after a factor")  # `x2`
        if divided:
            raise _Unsupported("a product after a division")  # `1/2x` is 1/(2x) there
        if tok == "\\frac" and before[0].isdigit():
            raise _Unsupported("a mixed number")  # `2\frac{1}{2}` is 5/2 there

    def unary(self) -> Any:
        # A loop, not recursion: `------5` must not nest a frame per sign.
        negative = False
        while self.peek() in ("-", "+"):
            negative ^= self.take() == "-"
        value = self.power()
        return sympy.Mul(-1, value, evaluate=False) if negative else value

    def power(self) -> Any:
        base = self.atom()
        if self.peek() != "^":
            return base
        self.take()
        tok = self.peek()
        if tok == "{":
            exponent = self.group()
        elif tok is not None and len(tok) == 1 and tok.isalnum():
            exponent = self.atom()
        else:
            raise _Unsupported("exponent")
        if self.peek() == "^":
            raise _Unsupported("a chain of powers")  # `a^b^c` reads differently in places
        return sympy.Pow(base, exponent, evaluate=False)

    def group(self) -> Any:
        self.take("{")
        inner = self.expr()
        self.take("}")
        return inner

    def atom(self) -> Any:
        tok = self.take()
        if tok[0].isdigit() or tok[0] == ".":
            return sympy.Float(tok) if "." in tok else sympy.Integer(int(tok))
        if tok == "\\pi":
            return sympy.pi
        if tok == "\\frac":
            num = self.group()
            return sympy.Mul(num, sympy.Pow(self.group(), -1, evaluate=False), evaluate=False)
        if tok == "\\sqrt":
            return self.sqrt()
        if tok == "(":
            inner = self.expr()
            self.take(")")
            return inner
        if tok == "{":
            inner = self.expr()
            self.take("}")
            return inner
        if tok.isalpha() and len(tok) == 1:
            return sympy.Symbol(tok)
        raise _Unsupported(tok)

    def sqrt(self) -> Any:
        if self.peek() == "[":
            self.take("[")
            index = self.expr()
            self.take("]")
            return sympy.Pow(self.group(), sympy.Pow(index, -1, evaluate=False), evaluate=False)
        return sympy.Pow(self.group(), sympy.Rational(1, 2), evaluate=False)


def parse(latex: str) -> Any | None:
    """The sympy tree of `latex`, or None when it is not one of the common forms."""
    tokens = _tokens(latex)
    if not tokens:
        return None
    parser = _Parser(tokens)
    try:
        expr = parser.expr()
    except (_Unsupported, RecursionError):  # brackets are bounded before; this is a backstop
        return None
    return expr if parser.i == len(tokens) else None
