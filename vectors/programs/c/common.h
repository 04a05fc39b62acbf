/*
 * common.h - shared macros for the freestanding test programs in this folder.
 *
 * The programs run with no C runtime and no operating system: the image is mapped by a
 * small PE loader, `entry` is called with a sentinel return address, and the value
 * `entry` returns (EAX/RAX) is the program's checksum. See README.md.
 */
#ifndef STACKSHAPES_COMMON_H
#define STACKSHAPES_COMMON_H

#define NOINLINE __attribute__((noinline))
#define NORETURN __attribute__((noreturn))

/* x86 calling conventions. The x64 compiler ignores these keywords (with a warning), so
 * they expand to nothing there and the functions use the Microsoft x64 convention. */
#if defined(__i386__)
#define CC_STDCALL __stdcall
#define CC_FASTCALL __fastcall
#define CC_THISCALL __attribute__((thiscall))
#else
#define CC_STDCALL
#define CC_FASTCALL
#define CC_THISCALL
#endif

/* Every program exports this as its entry point (the x86 symbol is `_entry`). */
int entry(void);

#endif
