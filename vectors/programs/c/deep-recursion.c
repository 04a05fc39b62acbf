/*
 * deep-recursion.c
 *
 * Stack shape exercised:
 *   - one recursion, 100,000 calls deep on x86 and 20,000 on x64, whose every frame keeps
 *     locals in memory (a four-word array whose address the next level reads) and three
 *     values live across the call in callee-saved registers (x86-fpo: EBX ESI EDI and EBP as
 *     a general register, 48 bytes a level; x64: RBX RSI RDI R14, 96 bytes a level);
 *   - the deepest level calls the leaf `bottom`, where a snapshot holds the whole chain:
 *     `bottom`, every `descend` and `entry`;
 *   - the images are linked for the stack this needs: /stack:16777216 (x86, 4.8 MB used)
 *     and /stack:2097152 (x64, 1.9 MB used).
 *
 * The depth is the initial value of g_depth, in .data; the result does not fold: each level
 * mixes its callee's result with values only it holds.
 */
#include "common.h"

#if defined(__x86_64__)
#define DEPTH 20000u
#else
#define DEPTH 100000u
#endif

static volatile unsigned g_depth = DEPTH;
static volatile unsigned g_seed = 0x9e3779b9u;
volatile unsigned g_sink;

NOINLINE unsigned bottom(const unsigned *cells, unsigned level)
{
    g_sink = level;
    return cells[0] ^ cells[1] ^ cells[2] ^ cells[3] ^ level;
}

NOINLINE unsigned descend(unsigned level, unsigned seed, const unsigned *parent)
{
    unsigned cells[4];
    unsigned a = seed * 2654435761u + level;
    unsigned b = (seed >> 7) ^ parent[level & 3];
    unsigned c = level * 7u + 1u;
    cells[0] = a;
    cells[1] = b;
    cells[2] = c;
    cells[3] = a ^ b ^ c;
    unsigned r;
    if (level >= g_depth)
        r = bottom(cells, level);
    else
        r = descend(level + 1, a + b, cells);
    /* a, b, c and cells are used after the call, so they live across it */
    return ((r ^ a) * 3u + b) ^ (c + cells[level & 3]);
}

int entry(void)
{
    unsigned start[4] = {1, 2, 3, 4};
    return (int)descend(1, g_seed, start);
}
