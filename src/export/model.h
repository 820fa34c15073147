/* hfx_model: an opened checkpoint plus its parsed architecture. */
#ifndef HFX_EXPORT_MODEL_H
#define HFX_EXPORT_MODEL_H

#include "arch/arch.h"
#include "hf/checkpoint.h"

struct hfx_model {
    hfx_checkpoint *ck;          /* owned */
    hfx_arena *arena;            /* owned: the parsed config */
    const hfx_arch_model *arch;  /* arena */
};

#endif
