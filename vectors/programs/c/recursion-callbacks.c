/*
 * recursion-callbacks.c
 *
 * Stack shapes exercised:
 *   - direct recursion: tree_sum walks a static binary tree whose deepest path is 6 nodes,
 *     with both recursive calls kept out of tail position;
 *   - mutual recursion: ping -> pong -> ping ... (depth 7 on entry's first call);
 *   - calls through a function-pointer table (run_table) and callbacks handed to a
 *     higher-order function (fold), including an indirect tail call (dispatch: the
 *     compiler emits a jump through the table, so dispatch never appears on the stack
 *     below the operation it selected);
 *   - x86 only: __stdcall (callee pops its arguments, `ret N`), __fastcall (first two
 *     arguments in ECX/EDX) and thiscall (first argument in ECX, callee pops the rest)
 *     callbacks, all called through pointers; on x64 they are plain x64 functions;
 *   - small leaf functions (on x64 a leaf with no stack use gets no .pdata entry).
 */
#include "common.h"

struct node {
    int value;
    const struct node *left;
    const struct node *right;
};

/* Deepest path: n0 -> n1 -> n3 -> n6 -> n8 -> n9 (6 levels). */
static const struct node n9 = {9, 0, 0};
static const struct node n8 = {8, &n9, 0};
static const struct node n7 = {7, 0, 0};
static const struct node n6 = {6, 0, &n8};
static const struct node n5 = {5, 0, 0};
static const struct node n4 = {4, &n7, 0};
static const struct node n3 = {3, &n6, 0};
static const struct node n2 = {2, &n5, 0};
static const struct node n1 = {1, &n3, &n4};
static const struct node n0 = {10, &n1, &n2};

/* Inputs live in volatile globals so the optimizer cannot fold the program away. */
static volatile int g_ping_depth = 7;
static volatile int g_seed = 3;
volatile int g_sink;

/* ---- leaves ---------------------------------------------------------------------- */

NOINLINE int combine(int a, int b) { return a * 3 + b; }
NOINLINE int op_add(int a, int b) { return a + b; }
NOINLINE int op_sub(int a, int b) { return a - b; }
NOINLINE int op_xor(int a, int b) { return (a ^ b) + 1; }

/* A non-leaf that is called through the table too. */
NOINLINE int op_mix(int a, int b)
{
    g_sink = a;
    return combine(b, g_sink) + 1;
}

/* ---- recursion ------------------------------------------------------------------- */

NOINLINE int tree_sum(const struct node *n)
{
    if (!n)
        return 1;
    int l = tree_sum(n->left);
    int r = tree_sum(n->right);
    return combine(l, r) + n->value;
}

NOINLINE int pong(int n);

NOINLINE int ping(int n)
{
    if (n <= 0)
        return g_seed;
    return pong(n - 1) * 2 + 1;
}

NOINLINE int pong(int n)
{
    if (n <= 0)
        return g_seed + 1;
    return ping(n - 1) + n;
}

/* ---- function pointers ----------------------------------------------------------- */

typedef int (*binop)(int, int);

static binop const g_ops[4] = {op_add, op_sub, op_xor, op_mix};

/* Indirect tail call: a and b are already where the callee wants them (x86: the same
 * stack slots; x64: RCX and RDX), so the call compiles to a jump through the table. */
NOINLINE int dispatch(int a, int b, unsigned i) { return g_ops[i & 3](a, b); }

NOINLINE int run_table(int x)
{
    int acc = x;
    for (unsigned i = 0; i < 4; i++)
        acc = dispatch(acc, (int)i + 2, i) + 1;
    return acc;
}

NOINLINE int fold(binop f, int init, int count)
{
    int acc = init;
    for (int i = 1; i <= count; i++)
        acc = f(acc, i);
    return acc * 2;
}

/* ---- x86 calling conventions, called through pointers ----------------------------- */

typedef int(CC_STDCALL *std3)(int, int, int);
typedef int(CC_FASTCALL *fast3)(int, int, int);
typedef int(CC_THISCALL *this2)(const struct node *, int);

NOINLINE int CC_STDCALL std_weigh(int a, int b, int c)
{
    g_sink = c;
    return combine(a, b) + g_sink;
}

NOINLINE int CC_FASTCALL fast_weigh(int a, int b, int c) { return a * 5 + b * 3 + c; }

NOINLINE int CC_THISCALL node_scaled(const struct node *self, int k)
{
    return self->value * k + tree_sum(self->right);
}

static volatile std3 g_std = std_weigh;
static volatile fast3 g_fast = fast_weigh;
static volatile this2 g_this = node_scaled;

NOINLINE int call_conventions(int x)
{
    int a = g_std(x, 2, 3);
    int b = g_fast(a, x, 4);
    int c = g_this(&n3, b & 7);
    return a + b + c;
}

/* ---- entry ------------------------------------------------------------------------ */

int entry(void)
{
    int acc = tree_sum(&n0);
    acc = acc * 7 + ping(g_ping_depth);
    acc = acc * 7 + run_table(g_seed);
    acc = acc * 7 + fold(op_mix, g_seed, 3);
    acc = acc * 7 + fold(op_sub, acc, 2);
    acc = acc * 7 + call_conventions(g_seed);
    return acc;
}
