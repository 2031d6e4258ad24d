"""Tokens of the XDR/RPC language (RFC 4506 §6.2, RFC 5531 §12) plus rpcgen's extras.

Handles ``/* */`` comments, ``%`` pass-through lines, cpp line markers
(``# 12 "file.x"``), decimal/hex/octal integers (with a leading ``-``), string
constants and character constants (``'A'``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from rpcgen.cpp import CONTINUED
from rpcgen.errors import Loc, ParseError

KEYWORDS = frozenset("""
    bool case const default double quadruple enum float hyper int opaque string struct
    switch typedef union unsigned void program version char short long
""".split())

# Kinds: "ident", "keyword", "number", "string", "passthrough", a punctuation character, "eof".
PUNCT = set("{}[]<>();,:=*")


@dataclass
class Token:
    kind: str
    text: str
    loc: Loc
    value: int | str | None = None

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r}, {self.loc})"


_MARKER = re.compile(r'#\s*(?:line\s+)?(\d+)\s+"((?:[^"\\]|\\.)*)"')
_NUMBER = re.compile(r"-?(0[xX][0-9a-fA-F]+|[0-9]+)")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def tokenize(text: str, file: str, macros: dict[str, str] | None = None) -> list[Token]:
    """Split preprocessed ``text`` into tokens; ``macros`` are expanded (built-in cpp mode)."""
    toks: list[Token] = []
    i, n = 0, len(text)
    line, line_start = 1, 0
    at_line_start = True
    macros = macros or {}

    def loc_at(pos: int) -> Loc:
        return Loc(file, line, pos - line_start + 1)

    while i < n:
        c = text[i]
        if c == "\n":
            i += 1
            line += 1
            line_start = i
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if at_line_start and c == "#":
            end = text.find("\n", i)
            end = n if end < 0 else end
            m = _MARKER.match(text, i, end)
            if m:
                file = m.group(2).replace('\\"', '"').replace("\\\\", "\\")
                line = int(m.group(1)) - 1  # the marker names the *next* line
            i = end
            continue
        if at_line_start and c == "%":
            loc = loc_at(i)
            end = text.find("\n", i)
            end = n if end < 0 else end
            # cpp's line splicing: a pass-through line that ends in a backslash goes on to the
            # next line (a %#define written over several lines, as in rpcsvc/nis.x).
            while end < n and text[i:end].rstrip("\r").endswith("\\"):
                line += 1
                line_start = end + 1
                nxt = text.find("\n", end + 1)
                end = n if nxt < 0 else nxt
            body = text[i + 1:end]
            if body.startswith(CONTINUED) and toks and toks[-1].kind == "passthrough":
                toks[-1].text += "\\\n" + body[1:]      # spliced by cpp (rpcgen.cpp.CONTINUED)
            else:
                toks.append(Token("passthrough", body, loc))
            i = end
            continue
        at_line_start = False
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ParseError(loc_at(i), "comment is never closed (missing */)")
            chunk = text[i:end + 2]
            nl = chunk.count("\n")
            if nl:
                line += nl
                line_start = i + chunk.rfind("\n") + 1
            i = end + 2
            continue
        if text.startswith("//", i):
            raise ParseError(loc_at(i), "'//' comments are not XDR; use /* ... */")
        if c == '"':
            end = i + 1
            while end < n and text[end] != '"':
                if text[end] == "\n":
                    raise ParseError(loc_at(i), "string constant runs past the end of the line")
                end += 2 if text[end] == "\\" else 1
            if end >= n:
                raise ParseError(loc_at(i), "string constant is never closed")
            toks.append(Token("string", text[i:end + 1], loc_at(i), text[i + 1:end]))
            i = end + 1
            continue
        if c == "'":
            m = re.compile(r"'(\\.|[^'\\])'").match(text, i)
            if not m:
                raise ParseError(loc_at(i), "bad character constant")
            body = m.group(1)
            value = ord(body.encode().decode("unicode_escape")) if body.startswith("\\") else ord(body)
            toks.append(Token("number", m.group(0), loc_at(i), value))
            i = m.end()
            continue
        if c.isdigit() or (c == "-" and i + 1 < n and text[i + 1].isdigit()):
            m = _NUMBER.match(text, i)
            digits = m.group(1)
            if digits.lower().startswith("0x"):
                value = int(digits, 16)
            elif len(digits) > 1 and digits[0] == "0":
                if not re.fullmatch(r"0[0-7]+", digits):
                    raise ParseError(loc_at(i), f"bad octal constant {digits}")
                value = int(digits, 8)
            else:
                value = int(digits)
            if m.group(0).startswith("-"):
                value = -value
            end = m.end()
            if end < n and (text[end].isalnum() or text[end] == "_"):
                raise ParseError(loc_at(i), f"bad number {text[i:end + 1]!r}")
            toks.append(Token("number", m.group(0), loc_at(i), value))
            i = end
            continue
        m = _IDENT.match(text, i)
        if m:
            word = m.group(0)
            loc = loc_at(i)
            i = m.end()
            if word in macros:
                toks.extend(_expand(word, macros, loc, set()))
            else:
                toks.append(Token("keyword" if word in KEYWORDS else "ident", word, loc))
            continue
        if c in PUNCT:
            toks.append(Token(c, c, loc_at(i)))
            i += 1
            continue
        raise ParseError(loc_at(i), f"unexpected character {c!r}")
    toks.append(Token("eof", "", Loc(file, line, i - line_start + 1)))
    return toks


def _expand(word: str, macros: dict[str, str], loc: Loc, seen: set[str]) -> list[Token]:
    """Expand an object-like macro (built-in cpp mode); tokens keep the use site's location."""
    if word in seen:
        return [Token("keyword" if word in KEYWORDS else "ident", word, loc)]
    out = []
    for t in tokenize(macros[word], loc.file)[:-1]:
        t.loc = loc
        if t.kind == "ident" and t.text in macros:
            out.extend(_expand(t.text, macros, loc, seen | {word}))
        else:
            out.append(t)
    return out
