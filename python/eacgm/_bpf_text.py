"""The BPF C text of the original eACGM's samplers, understood rather than compiled.

Each `int <sym>Entry(struct pt_regs *ctx) {...}` / `int <sym>Exit(...)` function of the
subset the original's demos use becomes a BpfFunction: the registers it reads (which the
declarative probe captures) and its statements, evaluated in user space per call with C's
integer rules. The subset:

  - locals:         `u64 x = EXPR;` (u8..u64, s8..s64, __u32, int, long, unsigned, size_t, ...)
                    and `x = EXPR;`
  - expressions:    integer literals, locals, PT_REGS_PARM1..6(ctx), PT_REGS_RC(ctx),
                    bpf_ktime_get_ns(), casts `(u32)e`, unary `- ~`, binary
                    `* + - << >> & ^ |`, parentheses
  - output:         bpf_trace_printk("fmt", args...) with %d %i %u %x %ld %li %lu %lx
                    %lld %llu %llx %% and at most three conversions (the kernel's limit)
  - `return N;`, comments, `#include`, and `struct NAME {...};` declarations (ignored)

Anything else is a BPFTextError naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from .errors import BPFTextError

# (bits, signed) of the type names the subset accepts.
TYPES: Dict[str, Tuple[int, bool]] = {}
for _bits in (8, 16, 32, 64):
    for _name in (f"u{_bits}", f"__u{_bits}", f"uint{_bits}_t"):
        TYPES[_name] = (_bits, False)
    for _name in (f"s{_bits}", f"__s{_bits}", f"int{_bits}_t"):
        TYPES[_name] = (_bits, True)
TYPES.update({
    "char": (8, True), "unsigned char": (8, False), "signed char": (8, True),
    "short": (16, True), "unsigned short": (16, False),
    "int": (32, True), "signed": (32, True), "signed int": (32, True), "unsigned": (32, False),
    "unsigned int": (32, False), "long": (64, True), "long int": (64, True), "signed long": (64, True),
    "unsigned long": (64, False), "unsigned long int": (64, False), "long long": (64, True),
    "unsigned long long": (64, False), "size_t": (64, False), "ssize_t": (64, True),
    "uintptr_t": (64, False),
})
U64 = (64, False)

MAX_PRINTK_ARGS = 3


def wrap(value: int, kind: Tuple[int, bool]) -> int:
    bits, signed = kind
    value &= (1 << bits) - 1
    if signed and value >> (bits - 1):
        value -= 1 << bits
    return value


def promote(kind: Tuple[int, bool]) -> Tuple[int, bool]:
    return (32, True) if kind[0] < 32 else kind


def common(a: Tuple[int, bool], b: Tuple[int, bool]) -> Tuple[int, bool]:
    a, b = promote(a), promote(b)
    if a[1] == b[1]:
        return (max(a[0], b[0]), a[1])
    unsigned, signed = (a, b) if not a[1] else (b, a)
    if unsigned[0] >= signed[0]:
        return unsigned
    return signed


# -- the lexer ----------------------------------------------------------------------------
TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+) | (?P<comment>//[^\n]*|/\*.*?\*/) | (?P<pre>\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<number>0[xX][0-9a-fA-F]+[uUlL]*|[0-9]+[uUlL]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op><<|>>|[-+*/%&|^~!<>=(){};,\[\].?:])
  | (?P<bad>.)
""", re.X | re.S)


@dataclass
class Tok:
    kind: str
    text: str
    line: int


def tokenize(text: str) -> List[Tok]:
    out = []
    line = 1
    for m in TOKEN.finditer(text):
        kind, value = m.lastgroup, m.group()
        if kind == "bad":
            raise BPFTextError(f"BPF text line {line}: unexpected character {value!r}")
        if kind not in ("ws", "comment", "pre"):
            out.append(Tok(kind, value, line))
        line += value.count("\n")
    out.append(Tok("eof", "", line))
    return out


# -- the functions ------------------------------------------------------------------------
@dataclass
class Env:
    """What one call gives the statements: the registers and the clock."""
    parms: Dict[int, int]
    rc: int
    ktime_ns: int


Eval = Callable[[Dict[str, int], Env], Tuple[int, Tuple[int, bool]]]


@dataclass
class Printk:
    pieces: List[str]            # literal text around the conversions
    convs: List[str]             # "d", "u", "x", "ld", "lu", "lx"
    args: List[Eval]
    line: int


@dataclass
class BpfFunction:
    name: str
    line: int
    parms: List[int] = field(default_factory=list)  # PT_REGS_PARMn read (1..6)
    reads_rc: bool = False
    steps: List[Tuple[str, object]] = field(default_factory=list)  # ("set", (name, kind, eval)) / ("print", Printk)
    notes: List[str] = field(default_factory=list)  # slips kept as the kernel would print them

    def run(self, env: Env) -> List[str]:
        """The lines this function's bpf_trace_printk calls print for one call."""
        local: Dict[str, int] = {}
        lines = []
        for what, step in self.steps:
            if what == "set":
                name, kind, ev = step
                local[name] = wrap(ev(local, env)[0], kind)
            else:
                lines.append(format_printk(step, local, env))
        return lines


def format_printk(p: Printk, local: Dict[str, int], env: Env) -> str:
    out = [p.pieces[0]]
    for i, conv in enumerate(p.convs):
        # A missing argument: the kernel prints whatever its register held; 0 here.
        value = p.args[i](local, env)[0] if i < len(p.args) else 0
        word = value & 0xFFFFFFFFFFFFFFFF
        if conv in ("d", "i"):
            out.append(str(wrap(word, (32, True))))
        elif conv == "u":
            out.append(str(word & 0xFFFFFFFF))
        elif conv == "x":
            out.append(format(word & 0xFFFFFFFF, "x"))
        elif conv in ("ld", "li", "lld"):
            out.append(str(wrap(word, (64, True))))
        elif conv in ("lu", "llu"):
            out.append(str(word))
        else:  # lx, llx
            out.append(format(word, "x"))
        out.append(p.pieces[i + 1])
    return "".join(out)


class Parser:
    def __init__(self, text: str) -> None:
        self.toks = tokenize(text)
        self.i = 0
        self.fn: Optional[BpfFunction] = None
        self.locals: Dict[str, Tuple[int, bool]] = {}

    # helpers
    def peek(self, k: int = 0) -> Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Tok:
        t = self.toks[self.i]
        self.i = min(self.i + 1, len(self.toks) - 1)
        return t

    def fail(self, tok: Tok, what: str) -> BPFTextError:
        where = f" in {self.fn.name}" if self.fn else ""
        return BPFTextError(f"BPF text line {tok.line}{where}: {what}")

    def expect(self, text: str) -> Tok:
        t = self.next()
        if t.text != text:
            raise self.fail(t, f"expected {text!r}, found {t.text or 'the end'!r}")
        return t

    def type_name(self) -> Optional[Tuple[str, Tuple[int, bool]]]:
        """A type at the cursor (consumed), or None (nothing consumed)."""
        words = []
        j = self.i
        while self.toks[j].kind == "ident" and self.toks[j].text in ("const", "volatile", "unsigned", "signed",
                                                                      "long", "int", "short", "char"):
            if self.toks[j].text not in ("const", "volatile"):
                words.append(self.toks[j].text)
            j += 1
        if not words and self.toks[j].kind == "ident" and self.toks[j].text in TYPES:
            words.append(self.toks[j].text)
            j += 1
        name = " ".join(words)
        if name not in TYPES:
            return None
        self.i = j
        return name, TYPES[name]

    # the text
    def parse(self) -> Dict[str, BpfFunction]:
        functions: Dict[str, BpfFunction] = {}
        while self.peek().kind != "eof":
            t = self.peek()
            if t.text == ";":
                self.next()
            elif t.text == "struct" and self.peek(2).text == "{":
                self.skip_struct()
            elif t.text == "int" and self.peek(1).kind == "ident" and self.peek(2).text == "(":
                fn = self.function()
                if fn.name in functions:
                    raise BPFTextError(f"BPF text line {fn.line}: function {fn.name} is defined twice")
                functions[fn.name] = fn
            else:
                raise self.fail(t, f"unexpected {t.text!r} at the top level (expected a function "
                                   "`int NAME(struct pt_regs *ctx) {...}` or a struct declaration)")
        return functions

    def skip_struct(self) -> None:
        for _ in range(3):  # struct NAME {
            self.next()
        depth = 0
        while True:
            t = self.next()
            if t.kind == "eof":
                raise self.fail(t, "unterminated struct declaration")
            if t.text == "{":
                depth += 1
            elif t.text == "}":
                if depth == 0:
                    break
                depth -= 1
        self.expect(";")

    def function(self) -> BpfFunction:
        self.next()  # int
        name = self.next()
        self.fn = BpfFunction(name.text, name.line)
        self.locals = {}
        self.expect("(")
        for text in ("struct", "pt_regs", "*", "ctx", ")"):
            t = self.next()
            if t.text != text:
                raise self.fail(t, "the compatible layer understands functions of one argument, "
                                   "`struct pt_regs *ctx`")
        self.expect("{")
        while self.peek().text != "}":
            if self.peek().kind == "eof":
                raise self.fail(self.peek(), "unterminated function body")
            self.statement()
        self.next()
        fn, self.fn = self.fn, None
        return fn

    def statement(self) -> None:
        t = self.peek()
        if t.text == ";":
            self.next()
            return
        if t.text == "return":
            self.next()
            self.expression()
            self.expect(";")
            return
        if t.text == "bpf_trace_printk":
            self.printk()
            return
        declared = self.type_name()
        if declared is not None:
            name = self.next()
            if name.kind != "ident":
                raise self.fail(name, f"expected a variable name after {declared[0]}")
            if name.text in self.locals:
                raise self.fail(name, f"{name.text} is declared twice")
            self.expect("=")
            ev = self.expression()
            self.expect(";")
            self.locals[name.text] = declared[1]
            self.fn.steps.append(("set", (name.text, declared[1], ev)))
            return
        if t.kind == "ident" and t.text in self.locals and self.peek(1).text == "=":
            self.next()
            self.next()
            ev = self.expression()
            self.expect(";")
            self.fn.steps.append(("set", (t.text, self.locals[t.text], ev)))
            return
        raise self.fail(t, f"unsupported statement starting with {t.text!r} (the compatible layer "
                           "understands locals, bpf_trace_printk and return)")

    def printk(self) -> None:
        start = self.next()
        self.expect("(")
        fmt_tok = self.next()
        if fmt_tok.kind != "string":
            raise self.fail(fmt_tok, "bpf_trace_printk needs a string literal format")
        fmt = fmt_tok.text
        while self.peek().kind == "string":  # adjacent literals join
            fmt = fmt[:-1] + self.next().text[1:]
        args = []
        while self.peek().text == ",":
            self.next()
            args.append(self.expression())
        self.expect(")")
        self.expect(";")
        pieces, convs = parse_format(unescape(fmt[1:-1], start, self), start, self)
        if len(convs) > MAX_PRINTK_ARGS:
            raise self.fail(start, f"bpf_trace_printk takes at most {MAX_PRINTK_ARGS} conversions, "
                                   f"this format has {len(convs)}")
        if len(args) < len(convs):
            self.fn.notes.append(f"line {start.line}: {len(convs)} conversions, {len(args)} arguments; "
                                 "the missing ones print 0")
        self.fn.steps.append(("print", Printk(pieces, convs, args, start.line)))

    # expressions, by C's precedence
    BINARY = [("|",), ("^",), ("&",), ("<<", ">>"), ("+", "-"), ("*",)]

    def expression(self, level: int = 0) -> Eval:
        if level == len(self.BINARY):
            return self.unary()
        left = self.expression(level + 1)
        while self.peek().text in self.BINARY[level]:
            op = self.next().text
            right = self.expression(level + 1)
            left = binary(op, left, right)
        if level == 0 and self.peek().text in ("/", "%", "<", ">", "==", "!=", "&&", "||", "?", "=", "!", "["):
            t = self.peek()
            raise self.fail(t, f"operator {t.text!r} is not in the compatible layer's subset "
                               "(* + - << >> & ^ | ~ and casts)")
        return left

    def unary(self) -> Eval:
        t = self.peek()
        if t.text == "-":
            self.next()
            inner = self.unary()
            return lambda local, env: negate(inner(local, env))
        if t.text == "~":
            self.next()
            inner = self.unary()
            return lambda local, env: invert(inner(local, env))
        if t.text == "(":
            save = self.i
            self.next()
            cast = self.type_name()
            if cast is not None and self.peek().text == ")":
                self.next()
                inner = self.unary()
                kind = cast[1]
                return lambda local, env: (wrap(inner(local, env)[0], kind), kind)
            self.i = save
            self.next()
            inner = self.expression()
            self.expect(")")
            return inner
        return self.primary()

    def primary(self) -> Eval:
        t = self.next()
        if t.kind == "number":
            value, kind = literal(t.text)
            return lambda local, env: (value, kind)
        if t.kind == "ident":
            m = re.fullmatch(r"PT_REGS_PARM([1-6])", t.text)
            if m or t.text == "PT_REGS_RC":
                self.expect("(")
                arg = self.next()
                if arg.text != "ctx":
                    raise self.fail(arg, f"{t.text} reads the probe's context: write {t.text}(ctx)")
                self.expect(")")
                exit_fn = self.fn.name.endswith("Exit")
                if m:
                    if exit_fn:
                        raise self.fail(t, f"{t.text}(ctx) in an Exit function: a function's arguments "
                                           "are gone when it returns (read them in its Entry function)")
                    n = int(m.group(1))
                    if n not in self.fn.parms:
                        self.fn.parms.append(n)
                    return lambda local, env: (env.parms.get(n, 0), U64)
                if not exit_fn:
                    raise self.fail(t, "PT_REGS_RC(ctx) in an Entry function: the return value exists "
                                       "only at the Exit")
                self.fn.reads_rc = True
                return lambda local, env: (env.rc & 0xFFFFFFFFFFFFFFFF, U64)
            if t.text == "bpf_ktime_get_ns":
                self.expect("(")
                self.expect(")")
                return lambda local, env: (env.ktime_ns, U64)
            if t.text in self.locals:
                name, kind = t.text, self.locals[t.text]
                return lambda local, env: (local[name], kind)
            if self.peek().text == "(":
                raise self.fail(t, f"call of {t.text}() is not in the compatible layer's subset "
                                   "(PT_REGS_PARMn, PT_REGS_RC, bpf_ktime_get_ns)")
            raise self.fail(t, f"unknown name {t.text!r}")
        raise self.fail(t, f"expected an expression, found {t.text or 'the end'!r}")


def negate(v):
    kind = promote(v[1])
    return wrap(-v[0], kind), kind


def invert(v):
    kind = promote(v[1])
    return wrap(~v[0], kind), kind


def binary(op: str, left: Eval, right: Eval) -> Eval:
    if op in ("<<", ">>"):
        def shift(local, env):
            a, b = left(local, env), right(local, env)
            kind = promote(a[1])
            count = b[0] % kind[0]
            value = a[0] << count if op == "<<" else wrap(a[0], kind) >> count
            return wrap(value, kind), kind
        return shift
    fn = {"*": lambda x, y: x * y, "+": lambda x, y: x + y, "-": lambda x, y: x - y,
          "&": lambda x, y: x & y, "^": lambda x, y: x ^ y, "|": lambda x, y: x | y}[op]

    def arith(local, env):
        a, b = left(local, env), right(local, env)
        kind = common(a[1], b[1])
        return wrap(fn(wrap(a[0], kind), wrap(b[0], kind)), kind), kind
    return arith


def literal(text: str) -> Tuple[int, Tuple[int, bool]]:
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|[0-9]+)([uUlL]*)", text)
    digits, suffix = m.group(1), m.group(2).lower()
    value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 8 if len(digits) > 1 and digits[0] == "0" else 10)
    unsigned = "u" in suffix
    long_ = "l" in suffix
    decimal = not digits.startswith("0") or digits == "0"
    for kind in ((32, True), (32, False), (64, True), (64, False)):
        if long_ and kind[0] == 32:
            continue
        if unsigned and kind[1]:
            continue
        if decimal and not unsigned and not kind[1]:
            continue  # decimal literals without u stay signed
        if value < (1 << (kind[0] - (1 if kind[1] else 0))):
            return value, kind
    return value & 0xFFFFFFFFFFFFFFFF, (64, False)


ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "r": "\r", "0": "\0"}


def unescape(body: str, tok: Tok, parser: Parser) -> str:
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            e = body[i + 1]
            if e not in ESCAPES:
                raise parser.fail(tok, f"unsupported escape \\{e} in the format")
            out.append(ESCAPES[e])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


CONV = re.compile(r"%(%|d|i|u|x|ld|li|lu|lx|lld|llu|llx)")


def parse_format(fmt: str, tok: Tok, parser: Parser) -> Tuple[List[str], List[str]]:
    pieces, convs = [""], []
    i = 0
    while i < len(fmt):
        if fmt[i] != "%":
            pieces[-1] += fmt[i]
            i += 1
            continue
        m = CONV.match(fmt, i)
        if not m:
            raise parser.fail(tok, f"unsupported conversion {fmt[i:i + 4]!r} in the format (the compatible layer "
                                   "prints %d %i %u %x %ld %li %lu %lx %lld %llu %llx %%)")
        if m.group(1) == "%":
            pieces[-1] += "%"
        else:
            convs.append(m.group(1))
            pieces.append("")
        i = m.end()
    # bpf_trace_printk's line ends at the first newline, which the trace pipe drops.
    pieces = [p.replace("\n", "") for p in pieces]
    return pieces, convs


def parse(text: str) -> Dict[str, BpfFunction]:
    """The functions of `text`, by name; BPFTextError at the first thing outside the subset."""
    return Parser(text).parse()
