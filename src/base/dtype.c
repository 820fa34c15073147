#include "hfx/hfx.h"

static const struct {
    const char *name;
    size_t size;
} dtype_table[HFX_DTYPE_COUNT_] = {
    [HFX_DTYPE_UNDEFINED] = {"undefined", 0}, [HFX_DTYPE_F32] = {"f32", 4},
    [HFX_DTYPE_F16] = {"f16", 2},             [HFX_DTYPE_BF16] = {"bf16", 2},
    [HFX_DTYPE_F64] = {"f64", 8},             [HFX_DTYPE_I64] = {"i64", 8},
    [HFX_DTYPE_I32] = {"i32", 4},             [HFX_DTYPE_I16] = {"i16", 2},
    [HFX_DTYPE_I8] = {"i8", 1},               [HFX_DTYPE_U8] = {"u8", 1},
    [HFX_DTYPE_BOOL] = {"bool", 1},
};

const char *hfx_dtype_name(hfx_dtype dtype) {
    return (unsigned)dtype < HFX_DTYPE_COUNT_ ? dtype_table[dtype].name : "undefined";
}

size_t hfx_dtype_size(hfx_dtype dtype) {
    return (unsigned)dtype < HFX_DTYPE_COUNT_ ? dtype_table[dtype].size : 0;
}

const char *hfx_version(void) { return HFX_VERSION_STRING; }
