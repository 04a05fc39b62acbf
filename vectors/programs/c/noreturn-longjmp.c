/*
 * noreturn-longjmp.c
 *
 * Stack shapes exercised:
 *   - noreturn calls: `fail` and `bail_out` never return, so a call to them can be the
 *     last instruction of the caller and the pushed return address points past the
 *     caller's last byte (at padding, an int3, or the next function's first byte);
 *   - a noreturn function calling another noreturn function (fail -> bail_out);
 *   - a non-local exit: bail_out does __builtin_longjmp to the __builtin_setjmp in
 *     guarded, which discards the frames in between (descend recursion, depth 6), so the
 *     stack pointer jumps up by several frames in one instruction; guarded saves every
 *     callee-saved register (on x64 RBX RBP RSI RDI R12-R15 and XMM6-XMM15) because
 *     setjmp clobbers them all;
 *   - recursion (descend) entered through a function pointer, and a run that returns
 *     normally through the same guard.
 */
#include "common.h"

static void *g_jmp[5];
static volatile int g_fail_code;
static volatile int g_limit = 6;
static volatile int g_divisor = 4;
volatile int g_sink;

NOINLINE NORETURN void bail_out(int code)
{
    g_fail_code = code;
    __builtin_longjmp(g_jmp, 1);
}

NOINLINE NORETURN void fail(int code) { bail_out(code * 7 + 1); }

NOINLINE int descend(int depth, int limit)
{
    if (depth >= limit)
        fail(depth);
    g_sink = depth;
    return descend(depth + 1, limit) * 2 + depth;
}

NOINLINE int checked_div(int a, int b)
{
    if (b == 0)
        fail(100 + a);
    return a / b;
}

NOINLINE int guarded(int (*fn)(int, int), int a, int b)
{
    if (__builtin_setjmp(g_jmp))
        return -g_fail_code;
    return fn(a, b) + 1;
}

int entry(void)
{
    int acc = guarded(descend, 0, g_limit);       /* fails at depth 6 */
    acc = acc * 11 + guarded(checked_div, 40, g_divisor); /* returns normally */
    acc = acc * 11 + guarded(checked_div, 3, g_divisor - 4); /* fails at once */
    return acc;
}
