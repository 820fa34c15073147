/* Dims: a tensor axis's length as a constant, a symbol (a name with min/max, e.g. batch_size in
 * [1, 2^31)) or a small affine sum of symbols (past_sequence_length + sequence_length), so that
 * each backend prints its own form. Its own header so that dim.c and the shape code need no
 * graph. */
#ifndef HFX_IR_DIM_H
#define HFX_IR_DIM_H

#include <stdbool.h>
#include <stdint.h>

#define HFX_DIM_TERMS 3 /* (past + sequence + a count derived from them: DeepSeek V4's compressed entries) */

typedef struct hfx_dim {
    int64_t c;                    /* constant part */
    int n;                        /* number of symbolic terms, 0..HFX_DIM_TERMS */
    int sym[HFX_DIM_TERMS];       /* symbol ids, ascending */
    int64_t coef[HFX_DIM_TERMS];  /* non-zero */
} hfx_dim;

typedef struct hfx_symbol {
    const char *name; /* arena */
    int64_t min, max;
    int64_t div, add; /* div > 0: derived from the others, ⌊of / div⌋ + add (no input's size: DeepSeek V4's
                         compressed entries, (past + sequence) / rate + 1) */
    hfx_dim of;
} hfx_symbol;

hfx_dim hfx_dim_const(int64_t c);
hfx_dim hfx_dim_sym(int sym);
/* a + b; ok=false (and a zero dim) when the sum needs more than HFX_DIM_TERMS symbols. */
hfx_dim hfx_dim_add(hfx_dim a, hfx_dim b, bool *ok);
hfx_dim hfx_dim_scale(hfx_dim a, int64_t k);
bool hfx_dim_eq(hfx_dim a, hfx_dim b);
/* d's value where symbol k is values[k] (a sample's sizes, torch.export's hints). */
int64_t hfx_dim_at(hfx_dim d, const int64_t *values);
static inline bool hfx_dim_is_const(hfx_dim d) { return d.n == 0; }

#endif
