/* torch.save's files from C, for the sample inputs a .pt2 archive carries: a protocol-2 pickle
 * of Python values (tuples, dicts, objects rebuilt from their class and __dict__) and tensors,
 * each tensor's storage a zero-filled record of torch.save's zip layout. Internal to the dynamo
 * backend. */
#ifndef HFX_FMT_DYNAMO_PICKLE_H
#define HFX_FMT_DYNAMO_PICKLE_H

#include <stdbool.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/dtype.h"
#include "io/outdir.h"

typedef struct hfx_pickle {
    hfx_buf code;     /* the pickle's opcodes */
    hfx_buf storages; /* uint64_t per storage: its byte count */
    bool unsupported; /* a tensor of a dtype torch.save has no storage class for */
} hfx_pickle;

/* Pickle opcodes the writers emit through hfx_pickle_op. */
#define HFX_PK_MARK "("
#define HFX_PK_TUPLE "t"           /* the items since the mark */
#define HFX_PK_TUPLE1 "\x85"
#define HFX_PK_TUPLE2 "\x86"
#define HFX_PK_EMPTY_TUPLE ")"
#define HFX_PK_EMPTY_DICT "}"
#define HFX_PK_EMPTY_LIST "]"
#define HFX_PK_SETITEMS "u"        /* key/value pairs since the mark, into the dict below it */
#define HFX_PK_APPENDS "e"         /* the items since the mark, onto the list below it */
#define HFX_PK_NONE "N"
#define HFX_PK_TRUE "\x88"
#define HFX_PK_FALSE "\x89"
#define HFX_PK_REDUCE "R"          /* callable(*args) */
#define HFX_PK_NEWOBJ "\x81"       /* cls.__new__(cls, *args) */
#define HFX_PK_BUILD "b"           /* the object's __dict__ updated from the dict on top */

/* Start a pickle (protocol 2). */
void hfx_pickle_begin(hfx_pickle *pk);

/* Append opcodes (HFX_PK_*, concatenated). */
void hfx_pickle_op(hfx_pickle *pk, const char *ops);

/* A global: module.name (a class or function). */
void hfx_pickle_global(hfx_pickle *pk, const char *module, const char *name);

/* A str, an int, a bool. */
void hfx_pickle_text(hfx_pickle *pk, const char *s);
void hfx_pickle_int(hfx_pickle *pk, int64_t v);
void hfx_pickle_bool(hfx_pickle *pk, bool v);

/* torch.device("cpu"). */
void hfx_pickle_cpu(hfx_pickle *pk);

/* A contiguous zero-filled tensor of `sizes` on the CPU, its storage the next record. */
void hfx_pickle_tensor(hfx_pickle *pk, hfx_dtype dtype, int rank, const int64_t *sizes);

/* End the pickle (STOP) and write it with its storages as torch.save's archive into a scratch
 * file of `out`, returned in *f at its start (the caller copies it and fcloses it). Out of
 * memory, or a tensor without a storage class (`what` names the archive), fail. */
hfx_status hfx_pickle_save(hfx_pickle *pk, hfx_outdir *out, const char *what, FILE **f, hfx_error *err);

void hfx_pickle_free(hfx_pickle *pk);

#endif
