/* Affine dims: c + Σ coef·symbol, kept normalized (terms sorted by symbol, no zero coefficient)
 * so that equality is structural. */
#include "ir/dim.h"

hfx_dim hfx_dim_const(int64_t c) { return (hfx_dim){.c = c}; }

hfx_dim hfx_dim_sym(int sym) { return (hfx_dim){.n = 1, .sym = {sym}, .coef = {1}}; }

hfx_dim hfx_dim_add(hfx_dim a, hfx_dim b, bool *ok) {
    hfx_dim r = {.c = a.c + b.c};
    int i = 0, j = 0;
    *ok = true;
    while (i < a.n || j < b.n) {
        int sym;
        int64_t coef;
        if (j >= b.n || (i < a.n && a.sym[i] < b.sym[j])) {
            sym = a.sym[i];
            coef = a.coef[i++];
        } else if (i >= a.n || b.sym[j] < a.sym[i]) {
            sym = b.sym[j];
            coef = b.coef[j++];
        } else {
            sym = a.sym[i];
            coef = a.coef[i++] + b.coef[j++];
        }
        if (coef == 0) continue;
        if (r.n == HFX_DIM_TERMS) {
            *ok = false;
            return hfx_dim_const(0);
        }
        r.sym[r.n] = sym;
        r.coef[r.n++] = coef;
    }
    return r;
}

hfx_dim hfx_dim_scale(hfx_dim a, int64_t k) {
    if (k == 0) return hfx_dim_const(0);
    a.c *= k;
    for (int i = 0; i < a.n; i++) a.coef[i] *= k;
    return a;
}

int64_t hfx_dim_at(hfx_dim d, const int64_t *values) {
    int64_t v = d.c;
    for (int t = 0; t < d.n; t++) v += d.coef[t] * values[d.sym[t]];
    return v;
}

bool hfx_dim_eq(hfx_dim a, hfx_dim b) {
    if (a.c != b.c || a.n != b.n) return false;
    for (int i = 0; i < a.n; i++)
        if (a.sym[i] != b.sym[i] || a.coef[i] != b.coef[i]) return false;
    return true;
}
