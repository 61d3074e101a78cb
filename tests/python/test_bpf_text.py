"""The compatible layer's BPF text subset (eacgm/_bpf_text.py): each construct and each
error. Pure Python: no privileges needed."""
import pytest

from eacgm import BPFTextError
from eacgm import _bpf_text as bt


def fn(body, name="fEntry"):
    return bt.parse(f"int {name}(struct pt_regs *ctx) {{\n{body}\n}}")[name]


def run(body, parms=None, rc=0, ktime=1000, name="fEntry"):
    return fn(body, name).run(bt.Env(parms or {}, rc, ktime))


def test_locals_from_registers_and_clock():
    f = fn("u64 a = PT_REGS_PARM1(ctx);\nu64 b = PT_REGS_PARM6(ctx);\nu64 ts = bpf_ktime_get_ns();\n"
           'bpf_trace_printk("%ld@start@f@%lu@%lu\\n", ts, a, b);\nreturn 0;')
    assert sorted(f.parms) == [1, 6] and not f.reads_rc
    assert f.run(bt.Env({1: 7, 6: 2**64 - 1}, 0, 55)) == ["55@start@f@7@18446744073709551615"]


def test_return_value_at_exit():
    f = fn('bpf_trace_printk("%ld@end@f@%d", bpf_ktime_get_ns(), PT_REGS_RC(ctx));', "fExit")
    assert f.reads_rc
    assert f.run(bt.Env({}, -3, 9)) == ["9@end@f@-3"]


@pytest.mark.parametrize("expr,want", [
    ("PT_REGS_PARM1(ctx) & 0xFFFF", 0x5678),
    ("PT_REGS_PARM1(ctx) >> 32", 0x1234),
    ("PT_REGS_PARM1(ctx) | 1", 0x1234_0000_5679),
    ("PT_REGS_PARM1(ctx) ^ 0xFF", 0x1234_0000_5687),
    ("(PT_REGS_PARM1(ctx) & 0xF) << 4", 0x80),
    ("PT_REGS_PARM2(ctx) * 8", 24),
    ("PT_REGS_PARM2(ctx) + 2 * 3", 9),
    ("(PT_REGS_PARM2(ctx) + 2) * 3", 15),
    ("PT_REGS_PARM2(ctx) - 5", 2**64 - 2),
    ("(u32)PT_REGS_PARM1(ctx)", 0x5678),
    ("(u8)(PT_REGS_PARM1(ctx) >> 3)", 0xCF),
    ("~0", 2**64 - 1),
    ("-1", 2**64 - 1),
])
def test_operators_and_casts(expr, want):
    out = run(f'u64 v = {expr};\nbpf_trace_printk("%lu", v);', {1: 0x1234_0000_5678, 2: 3})
    assert out == [str(want)]


def test_u32_locals_wrap_like_c():
    # u32 * u32 wraps at 32 bits; the demos' dim3 arithmetic.
    body = ("u32 x = PT_REGS_PARM1(ctx) & 0xFFFF;\nu32 y = PT_REGS_PARM1(ctx) >> 32;\n"
            "u32 n = x * y * y;\nbpf_trace_printk(\"%u %d %ld\", n, n, n);")
    assert run(body, {1: (0x10000 << 32) | 0xFFFF}) == ["0 0 0"]
    assert run(body, {1: (3 << 32) | 2}) == ["18 18 18"]
    # A signed local sign-extends into a 64-bit conversion; an unsigned one does not.
    assert run("s32 v = PT_REGS_PARM1(ctx);\nbpf_trace_printk(\"%d %u %ld\", v, v, v);", {1: 0xFFFFFFFF}) == [
        "-1 4294967295 -1"]
    assert run("u32 v = PT_REGS_PARM1(ctx);\nbpf_trace_printk(\"%d %lx %x\", v, v, v);", {1: 0xFFFFFFFF}) == [
        "-1 ffffffff ffffffff"]


def test_conversions():
    out = run('bpf_trace_printk("%d|%i|%u|%%", PT_REGS_PARM1(ctx), PT_REGS_PARM1(ctx), PT_REGS_PARM1(ctx));',
              {1: 0xFFFF_FFFF_FFFF_FFFE})
    assert out == ["-2|-2|4294967294|%"]
    out = run('bpf_trace_printk("%x|%li|%lld", PT_REGS_PARM1(ctx), PT_REGS_PARM1(ctx), PT_REGS_PARM1(ctx));',
              {1: 0xFFFF_FFFF_FFFF_FFFE})
    assert out == ["fffffffe|-2|-2"]


def test_printk_pieces_and_hex():
    assert run('bpf_trace_printk("a %lx b %llx c %llu", PT_REGS_PARM1(ctx), 255, 7);', {1: 0xABC}) == [
        "a abc b ff c 7"]


def test_missing_argument_prints_zero_and_is_noted():
    f = fn('bpf_trace_printk("%ld@start@cudaMemcpy@%ld@%ld\\n", bpf_ktime_get_ns(), PT_REGS_PARM4(ctx));')
    assert f.notes and "3 conversions, 2 arguments" in f.notes[0]
    assert f.run(bt.Env({4: 1}, 0, 5)) == ["5@start@cudaMemcpy@1@0"]


def test_swapped_arguments_print_as_written():
    out = run('u64 p = PT_REGS_PARM1(ctx);\nu64 ts = bpf_ktime_get_ns();\n'
              'bpf_trace_printk("%ld@start@cudaFree@%ld\\n", p, ts);', {1: 4096}, ktime=77)
    assert out == ["4096@start@cudaFree@77"]


def test_top_level_extras_are_ignored():
    text = ('// comment\n#include <uapi/linux/ptrace.h>\n/* block\n comment */\n'
            'struct dim3 {\n unsigned int x, y, z;\n};\n'
            'int gEntry(struct pt_regs *ctx){ bpf_trace_printk("x"); return 0; };\n'
            'int gExit(struct pt_regs *ctx){ return 0; }\n')
    fns = bt.parse(text)
    assert set(fns) == {"gEntry", "gExit"}
    assert fns["gEntry"].run(bt.Env({}, 0, 0)) == ["x"]


def test_assignment_and_multiple_printk():
    out = run("u64 a = 1;\na = a + PT_REGS_PARM1(ctx);\nbpf_trace_printk(\"%lu\", a);\nbpf_trace_printk(\"two\");",
              {1: 41})
    assert out == ["42", "two"]


@pytest.mark.parametrize("body,line,words", [
    ("u64 a = PT_REGS_PARM1(ctx) / 2;", 2, "operator '/'"),
    ("u64 a = bpf_get_current_pid_tgid();", 2, "bpf_get_current_pid_tgid"),
    ("u64 a = b;", 2, "unknown name 'b'"),
    ("if (1) return 0;", 2, "unsupported statement"),
    ('bpf_trace_printk("%s", 1);', 2, "unsupported conversion"),
    ('bpf_trace_printk("%ld %ld %ld %ld", 1, 2, 3, 4);', 2, "at most 3"),
    ("u64 a = PT_REGS_PARM7(ctx);", 2, "call of PT_REGS_PARM7()"),
    ("u64 a = PT_REGS_RC(ctx);", 2, "PT_REGS_RC(ctx) in an Entry function"),
    ("u64 a = 1;\nu64 a = 2;", 3, "declared twice"),
    ("u64 a = PT_REGS_PARM1(regs);", 2, "PT_REGS_PARM1(ctx)"),
    ("struct foo *p = 0;", 2, "unsupported statement"),
])
def test_errors_name_the_line(body, line, words):
    with pytest.raises(BPFTextError) as err:
        fn(body)
    text = str(err.value)
    assert f"line {line} in fEntry" in text and words in text, text
    assert "\n" not in text


def test_parm_in_exit_is_an_error():
    with pytest.raises(BPFTextError) as err:
        fn("u64 a = PT_REGS_PARM1(ctx);", "fExit")
    assert "in an Exit function" in str(err.value)


def test_top_level_errors():
    with pytest.raises(BPFTextError, match="line 2: unexpected 'BPF_HASH'"):
        bt.parse("\nBPF_HASH(start, u32);\n")
    with pytest.raises(BPFTextError, match="struct pt_regs"):
        bt.parse("int fEntry(void *ctx) { return 0; }")
    with pytest.raises(BPFTextError, match="defined twice"):
        bt.parse("int f(struct pt_regs *ctx) { return 0; }\nint f(struct pt_regs *ctx) { return 0; }")
    with pytest.raises(BPFTextError, match="unterminated"):
        bt.parse("int f(struct pt_regs *ctx) { return 0;")
