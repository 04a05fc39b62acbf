/*
 * aligned-callee-saved.c
 *
 * Stack shapes exercised:
 *   - stack realignment: aligned_pair and aligned_chain keep 32-byte-aligned locals live
 *     across calls (x86: EBP frame plus `and esp, -32`, FrameData programs using `@`;
 *     x64: RBP frame plus `and rsp, -32`, UNWIND_INFO with a frame register); the
 *     aligned frames nest (aligned_chain calls aligned_pair);
 *   - many callee-saved registers: many_live keeps ten integers live across calls, so
 *     every callee-saved general register is pushed (x86: EBX ESI EDI EBP; x64: RBX RBP
 *     RSI RDI R12-R15), and on x64 float_live keeps doubles live across calls, which saves
 *     XMM6 and up (UWOP_SAVE_XMM128);
 *   - nesting: many_live calls float_live, which calls aligned_pair;
 *   - small leaf functions (check_align, opaque).
 */
#include "common.h"

/* Floating-point code needs this symbol when there is no C runtime. */
int _fltused;

static volatile int g_seed = 9;
static volatile double g_scale = 1.5;
volatile int g_sink;

NOINLINE int opaque(int x) { return x * 7 + 3; }

NOINLINE int check_align(const volatile void *p)
{
    return ((unsigned)(__UINTPTR_TYPE__)p & 31) == 0 ? 1 : 1000;
}

NOINLINE int aligned_pair(int seed)
{
    __attribute__((aligned(32))) volatile int a[8];
    __attribute__((aligned(32))) volatile int b[8];
    a[0] = seed;
    b[7] = seed + 1;
    int r = check_align(a) + check_align(b);
    return r + a[0] + b[7];
}

NOINLINE int aligned_chain(int seed)
{
    __attribute__((aligned(32))) volatile long long v[4];
    v[0] = seed;
    v[3] = aligned_pair(seed + 1);
    return (int)(v[0] + v[3]) + check_align(v);
}

NOINLINE int float_live(int seed)
{
    double s = g_scale;
    double d0 = seed * s, d1 = d0 + s, d2 = d1 * s, d3 = d2 - 0.25;
    double d4 = d3 * d0, d5 = d4 + d1, d6 = d5 * 0.5, d7 = d6 + d2;
    int r = aligned_pair(seed);
    r += opaque((int)d7);
    /* every d* is used after the calls, so they are live across them */
    double t = d0 + d1 * 2 + d2 * 3 + d3 * 4 + d4 * 5 + d5 * 6 + d6 * 7 + d7 * 8;
    return r + (int)t;
}

NOINLINE int many_live(int a, int b, int c, int d)
{
    int x0 = opaque(a), x1 = opaque(b), x2 = opaque(c), x3 = opaque(d);
    int x4 = x0 * x1 + 1, x5 = x2 ^ x3, x6 = x0 - x3, x7 = x1 + x2 * 5;
    int x8 = x4 ^ x6, x9 = x5 + x7;
    int r = float_live(x0 & 15);
    r += opaque(x9);
    g_sink = r;
    return r + x0 + x1 * 2 + x2 * 3 + x3 * 4 + x4 * 5 + x5 * 6 + x6 * 7 + x7 * 8 + x8 * 9 + x9;
}

int entry(void)
{
    int acc = aligned_chain(g_seed);
    acc = acc * 5 + many_live(g_seed, 2, 3, acc);
    acc = acc * 5 + float_live(g_seed);
    return acc;
}
