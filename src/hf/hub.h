/* Models named by a Hugging Face Hub id ("Qwen/Qwen3-0.6B") are found in the local Hub cache, the
 * layout huggingface_hub writes: <cache>/models--<org>--<name>/refs/<revision> holds a commit
 * hash, and snapshots/<hash>/ the files. The cache is $HF_HUB_CACHE, else $HF_HOME/hub, else
 * $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub — huggingface_hub's order. hfx
 * never downloads: a model that is not cached is an error naming every path tried. */
#ifndef HFX_HF_HUB_H
#define HFX_HF_HUB_H

#include <stdbool.h>
#include <stddef.h>

#include "hfx/hfx.h"

/* Whether `name` has the form of a Hub repo id ("org/name" or "name", letters, digits, '-', '_',
 * '.'), and so may be looked up when no directory of that name exists. */
bool hfx_hub_is_repo_id(const char *name);

/* The snapshot directory of `repo_id` at `revision` (NULL: "main"; a branch or tag name, or a
 * 40-hex commit hash) in the local cache, into out[0..size). HFX_ERR_INVALID when it is not there,
 * with every path tried. */
hfx_status hfx_hub_resolve(const char *repo_id, const char *revision, char *out, size_t size, hfx_error *err);

#endif
