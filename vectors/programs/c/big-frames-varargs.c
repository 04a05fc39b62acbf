/*
 * big-frames-varargs.c
 *
 * Stack shapes exercised:
 *   - frames larger than a page, so the prolog calls the stack probe (__chkstk on x64,
 *     _chkstk on x86, supplied by chkstk-x64.s / chkstk-x86.s):
 *       one_page:     ~5 KB of locals (probe walks 1-2 pages);
 *       three_pages:  ~12 KB of locals, which calls one_page, so two probed frames nest;
 *       aligned_big:  ~4.5 KB of 32-byte-aligned locals (realignment plus a probe);
 *       dyn_buffer:   a variable-size __builtin_alloca (probe call in the body, not the
 *                     prolog; on x64 an RBP frame pointer, on x86 an EBP frame);
 *   - variadic functions: sum_ints (ints), mixed (ints and 64-bit integers selected by
 *     a format string), and vmixed, which receives a va_list from its variadic caller;
 *     on x64 the variadic callee spills RDX/R8/R9 into the caller's home area;
 *   - variadic calls made from inside a probed frame.
 */
#include "common.h"

typedef __builtin_va_list va_list;
#define va_start(ap, last) __builtin_va_start(ap, last)
#define va_arg(ap, type) __builtin_va_arg(ap, type)
#define va_end(ap) __builtin_va_end(ap)

static volatile int g_seed = 5;
static volatile int g_dyn_bytes = 4400;
volatile int g_sink;

NOINLINE int touch(volatile char *p, int n)
{
    p[0] = (char)n;
    p[n] = (char)(n + 1);
    return p[0] + p[n];
}

/* ---- variadic ---------------------------------------------------------------------- */

NOINLINE int sum_ints(int count, ...)
{
    va_list ap;
    va_start(ap, count);
    int total = 0;
    for (int i = 0; i < count; i++)
        total = total * 3 + va_arg(ap, int);
    va_end(ap);
    return total;
}

/* 'i' = int, 'q' = long long (8 bytes on the x86 stack, one slot on x64). */
NOINLINE int vmixed(const char *fmt, va_list ap)
{
    long long total = 0;
    for (; *fmt; fmt++) {
        if (*fmt == 'q')
            total = total * 5 + va_arg(ap, long long);
        else
            total = total * 5 + va_arg(ap, int);
    }
    return (int)(total ^ (total >> 32));
}

NOINLINE int mixed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vmixed(fmt, ap);
    va_end(ap);
    return r + 1;
}

/* ---- probed frames ----------------------------------------------------------------- */

NOINLINE int one_page(int seed)
{
    volatile char buf[5000];
    int r = touch(buf, 4990 - (seed & 7));
    buf[17] = (char)seed;
    return r + buf[17] + sum_ints(3, seed, r, 7);
}

NOINLINE int three_pages(int seed)
{
    volatile int words[3 * 1024];
    words[0] = seed;
    words[3 * 1024 - 1] = seed * 2;
    int r = touch((volatile char *)words, 3 * 4096 - 8);
    r += one_page(seed + words[0]);
    r += mixed("iqi", r, (long long)seed << 33 | 5, words[3 * 1024 - 1]);
    return r + words[0];
}

NOINLINE int aligned_big(int seed)
{
    __attribute__((aligned(32))) volatile char block[4608];
    int r = touch(block, 4600 - seed);
    return r + (int)((unsigned long long)(__UINTPTR_TYPE__)block & 31);
}

NOINLINE int dyn_buffer(int n)
{
    volatile char *p = __builtin_alloca((unsigned)n);
    return touch(p, n - 1) + sum_ints(2, n, 9);
}

/* ---- entry ------------------------------------------------------------------------- */

int entry(void)
{
    int acc = three_pages(g_seed);
    acc = acc * 3 + aligned_big(g_seed);
    acc = acc * 3 + dyn_buffer(g_dyn_bytes);
    acc = acc * 3 + sum_ints(5, 1, 2, 3, 4, acc);
    acc = acc * 3 + mixed("qiq", 1LL << 40, g_seed, (long long)acc);
    return acc;
}
