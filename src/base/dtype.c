#include "base/dtype.h"

static const struct {
    const char *name;
    unsigned bits;
    bool is_float;
} dtype_table[HFX_DTYPE_COUNT_] = {
    [HFX_DTYPE_UNDEFINED] = {"undefined", 0, false}, [HFX_DTYPE_F32] = {"f32", 32, true},
    [HFX_DTYPE_F16] = {"f16", 16, true},             [HFX_DTYPE_BF16] = {"bf16", 16, true},
    [HFX_DTYPE_F64] = {"f64", 64, true},             [HFX_DTYPE_I64] = {"i64", 64, false},
    [HFX_DTYPE_I32] = {"i32", 32, false},            [HFX_DTYPE_I16] = {"i16", 16, false},
    [HFX_DTYPE_I8] = {"i8", 8, false},               [HFX_DTYPE_U8] = {"u8", 8, false},
    [HFX_DTYPE_BOOL] = {"bool", 8, false},           [HFX_DTYPE_I4] = {"i4", 4, false},
    [HFX_DTYPE_U4] = {"u4", 4, false},             [HFX_DTYPE_F8E4M3] = {"f8e4m3", 8, false},
    [HFX_DTYPE_F8E5M2] = {"f8e5m2", 8, false},         [HFX_DTYPE_F8E8M0] = {"f8e8m0", 8, false},
};

const char *hfx_dtype_name(hfx_dtype dtype) {
    return (unsigned)dtype < HFX_DTYPE_COUNT_ ? dtype_table[dtype].name : "undefined";
}

unsigned hfx_dtype_bits(hfx_dtype dtype) {
    return (unsigned)dtype < HFX_DTYPE_COUNT_ ? dtype_table[dtype].bits : 0;
}

size_t hfx_dtype_size(hfx_dtype dtype) {
    unsigned bits = hfx_dtype_bits(dtype);
    return bits % 8 ? 0 : bits / 8;
}

uint64_t hfx_dtype_nbytes(hfx_dtype dtype, uint64_t numel) {
    uint64_t bits = hfx_dtype_bits(dtype);
    if (bits && numel > (UINT64_MAX - 7) / bits) return UINT64_MAX;
    return (numel * bits + 7) / 8;
}

bool hfx_dtype_is_float(hfx_dtype dtype) {
    return (unsigned)dtype < HFX_DTYPE_COUNT_ && dtype_table[dtype].is_float;
}

const char *hfx_version(void) { return HFX_VERSION_STRING; }
