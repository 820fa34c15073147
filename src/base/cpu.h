/* What the CPU offers beyond the baseline, asked with the cpuid instruction itself. CPUID traps
 * to the hypervisor in a VM and costs tens of microseconds there: ask once (an ifunc resolver),
 * not per call. Inline and uninstrumented, because ifunc resolvers run before the sanitizers and
 * a fuzzer's coverage counters are set up. */
#ifndef HFX_BASE_CPU_H
#define HFX_BASE_CPU_H

#include <stdbool.h>

#if defined(__x86_64__) && defined(__ELF__) && defined(__GLIBC__) && (defined(__GNUC__) || defined(__clang__))
/* ifuncs need glibc's dynamic linker (or its static start-up code); elsewhere, portable paths */
#define HFX_HAVE_IFUNC 1
#include <cpuid.h>

#if defined(__has_attribute) && __has_attribute(disable_sanitizer_instrumentation)
#define HFX_UNINSTRUMENTED __attribute__((disable_sanitizer_instrumentation))
#else
#define HFX_UNINSTRUMENTED __attribute__((no_sanitize("address", "undefined")))
#endif

/* AVX and F16C usable: F16C's 256-bit forms need AVX, and AVX needs the OS to save the YMM
 * registers (OSXSAVE, and XCR0's SSE and AVX bits). Leaf 1 exists on every x86-64. */
static inline __attribute__((always_inline)) HFX_UNINSTRUMENTED bool hfx_cpu_has_f16c(void) {
    unsigned a, b, c, d;
    const unsigned osxsave = 1u << 27, avx = 1u << 28, f16c = 1u << 29;
    __cpuid(1, a, b, c, d);
    (void)a, (void)b, (void)d;
    if ((c & (osxsave | avx | f16c)) != (osxsave | avx | f16c)) return false;
    unsigned xcr0_lo, xcr0_hi;
    __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    (void)xcr0_hi;
    return (xcr0_lo & 6u) == 6u;
}
#endif

#endif
