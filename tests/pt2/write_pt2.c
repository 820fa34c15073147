/* Writes a small hand-built ATen program as a .pt2 archive (fmt/dynamo/pt2.c), for
 * tests/oracle/test_pt2_archive.py to load with torch.export.load and run:
 *
 *   y = (x * w + x).reshape(-1, 2, 2), z = (x * w + x + c).reshape(x.shape[0] * 4 + 0)
 *   with x [batch, 4] f32 (batch a symbol in [1, 64]), w the parameter "layer.weight" =
 *   [1, 2, 3, 4] and c a constant table [10, 20, 30, 40]; the flat size is a SymInt computed
 *   from aten.sym_size.int through _operator.mul and _operator.add.
 *
 * usage: write_pt2 OUT_DIR (writes OUT_DIR/model.pt2). Exit 0 when the export committed. */
#include <stdio.h>

#include "fmt/dynamo/pt2.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
        return 2;
    }
    hfx_graph *g = hfx_graph_new();
    if (!g) return 1;
    int batch = hfx_graph_symbol(g, "batch", 1, 64);
    int64_t hints[1] = {2};
    hfx_aten_program *p = hfx_aten_program_new(g, hints);
    if (!p) return 1;
    hfx_dim b = hfx_dim_sym(batch), four = hfx_dim_const(4), two = hfx_dim_const(2);
    static const float w_data[4] = {1, 2, 3, 4};
    int w = hfx_aten_parameter(p, "layer.weight", HFX_DTYPE_F32, 1, &four, NULL, (const uint8_t *)w_data);
    int x = hfx_aten_user_input(p, "x", HFX_DTYPE_F32, 2, (hfx_dim[]){b, four});
    int mul = hfx_aten_call(p, HFX_ATEN_MUL, (hfx_aten_arg[]){hfx_arg_tensor(x), hfx_arg_tensor(w)}, 2, HFX_DTYPE_F32, 2,
                            (hfx_dim[]){b, four});
    int add = hfx_aten_call(p, HFX_ATEN_ADD, (hfx_aten_arg[]){hfx_arg_tensor(mul), hfx_arg_tensor(x)}, 2, HFX_DTYPE_F32,
                            2, (hfx_dim[]){b, four});
    int view = hfx_aten_call(p, HFX_ATEN_RESHAPE,
                             (hfx_aten_arg[]){hfx_arg_tensor(add), hfx_arg_ints(p, 3, (int64_t[]){-1, 2, 2})}, 2,
                             HFX_DTYPE_F32, 3, (hfx_dim[]){b, two, two});
    hfx_aten_output(p, view, -1);
    static const float c_data[4] = {10, 20, 30, 40};
    int c = hfx_aten_constant(p, HFX_DTYPE_F32, 1, &four, NULL, (const uint8_t *)c_data);
    int plus = hfx_aten_call(p, HFX_ATEN_ADD, (hfx_aten_arg[]){hfx_arg_tensor(add), hfx_arg_tensor(c)}, 2,
                             HFX_DTYPE_F32, 2, (hfx_dim[]){b, four});
    hfx_dim flat = {.c = 0, .n = 1, .sym = {batch}, .coef = {4}};
    int s0 = hfx_aten_sym_size(p, x, 0);
    int s4 = hfx_aten_sym_op(p, HFX_SYM_MUL, (hfx_aten_size){s0, 0}, (hfx_aten_size){-1, 4}, flat);
    int s4b = hfx_aten_sym_op(p, HFX_SYM_ADD, (hfx_aten_size){s4, 0}, (hfx_aten_size){-1, 0}, flat);
    int z = hfx_aten_call(p, HFX_ATEN_RESHAPE,
                          (hfx_aten_arg[]){hfx_arg_tensor(plus), hfx_arg_sizes(p, 1, (hfx_aten_size[]){{s4b, 0}})}, 2,
                          HFX_DTYPE_F32, 1, &flat);
    hfx_aten_output(p, z, -1);
    hfx_error err = {0};
    hfx_outdir *o;
    hfx_status st = hfx_outdir_open(argv[1], NULL, &o, &err);
    if (!st) {
        hfx_pt2_call call;
        st = hfx_pt2_positional_call(p, &call, &err);
        if (!st) {
            st = hfx_pt2_write(p, &call, "model", o, "model.pt2", &err);
            hfx_pt2_call_free(&call);
        }
        if (!st) st = hfx_outdir_commit(o, &err);
        else hfx_outdir_abort(o);
    }
    if (st) fprintf(stderr, "write_pt2: %s\n", err.message);
    hfx_aten_program_free(p);
    hfx_graph_free(g);
    return st ? 1 : 0;
}
