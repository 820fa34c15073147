/* Unit tests of the pieces formats and families plug into: the dtype table (sub-byte sizes),
 * multi-output nodes, declared state, the decomposition pass and the format registry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "export/config.h"
#include "fmt/format.h"
#include "ir/graph.h"

/* int4 tensors are sized from bits: two elements a byte, the last byte padded. */
static void test_dtype_bits(void **state) {
    (void)state;
    assert_int_equal(hfx_dtype_bits(HFX_DTYPE_I4), 4);
    assert_int_equal(hfx_dtype_bits(HFX_DTYPE_BF16), 16);
    assert_int_equal(hfx_dtype_nbytes(HFX_DTYPE_I4, 7), 4);
    assert_int_equal(hfx_dtype_nbytes(HFX_DTYPE_U4, 8), 4);
    assert_int_equal(hfx_dtype_nbytes(HFX_DTYPE_F32, 3), 12);
    assert_int_equal(hfx_dtype_nbytes(HFX_DTYPE_F64, UINT64_MAX / 4), UINT64_MAX); /* overflow */
    assert_int_equal(hfx_dtype_size(HFX_DTYPE_I4), 0); /* no whole-byte element size */
    assert_true(hfx_dtype_is_packed(HFX_DTYPE_U4));
    assert_false(hfx_dtype_is_packed(HFX_DTYPE_I8));
    assert_string_equal(hfx_dtype_name(HFX_DTYPE_I4), "i4");
}

static hfx_value *input(hfx_graph *g, const char *name, hfx_dtype dt, int rank, const hfx_dim *dims) {
    return hfx_graph_input(g, name, dt, rank, dims);
}

/* One TopK node yields values and indices. */
static void test_top_k_two_outputs(void **state) {
    (void)state;
    hfx_graph *g = hfx_graph_new();
    hfx_value *x = input(g, "x", HFX_DTYPE_F32, 2, (hfx_dim[]){hfx_dim_const(3), hfx_dim_const(8)});
    hfx_value *values, *indices;
    hfx_top_k(g, x, 2, &values, &indices);
    assert_int_equal(g->n_nodes, 1);
    assert_ptr_equal(values->producer, indices->producer);
    assert_int_not_equal(values->id, indices->id);
    assert_int_equal(values->producer->n_out, 2);
    assert_int_equal(values->dtype, HFX_DTYPE_F32);
    assert_int_equal(indices->dtype, HFX_DTYPE_I64);
    assert_int_equal(indices->dims[1].c, 2);
    hfx_graph_output(g, values, "v");
    hfx_graph_output(g, indices, "i");
    hfx_error err;
    assert_int_equal(hfx_graph_verify(g, &err), HFX_OK);
    hfx_graph_free(g);
}

/* State is declared, read and written; verify refuses one never written. */
static void test_state(void **state) {
    (void)state;
    hfx_graph *g = hfx_graph_new();
    hfx_dim d[2] = {hfx_dim_const(2), hfx_dim_sym(hfx_graph_symbol(g, "past", 0, 100))};
    int s = hfx_graph_state(g, "cache", HFX_STATE_APPEND, 1);
    hfx_value *past = hfx_state_read(g, s, "past_cache", HFX_DTYPE_F32, 2, d);
    hfx_value *now = input(g, "x", HFX_DTYPE_F32, 2, (hfx_dim[]){hfx_dim_const(2), hfx_dim_const(1)});
    hfx_value *parts[2] = {past, now};
    hfx_value *next = hfx_concat(g, 2, parts, 1);
    hfx_error err;
    assert_int_not_equal(hfx_graph_verify(g, &err), HFX_OK); /* not written yet */
    assert_non_null(strstr(err.message, "never written"));
    hfx_state_write(g, s, next, "present_cache");
    assert_int_equal(hfx_graph_verify(g, &err), HFX_OK);
    assert_ptr_equal(hfx_graph_state_of(g, past, true), &g->states[0]);
    assert_ptr_equal(hfx_graph_state_of(g, next, false), &g->states[0]);
    assert_null(hfx_graph_state_of(g, now, true));
    assert_string_equal(g->outputs[0]->name, "present_cache");
    hfx_graph_free(g);
}

static int count_op(const hfx_graph *g, hfx_op op) {
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) n += g->nodes[i]->op == op;
    return n;
}

/* A graph with every high-level op: rms_norm (plain and Gemma's offset), a biased linear,
 * grouped soft-capped attention, top_k_mask, and a reshape that moves two symbolic dims. */
static hfx_graph *high_level_graph(void) {
    hfx_graph *g = hfx_graph_new();
    hfx_dim B = hfx_dim_sym(hfx_graph_symbol(g, "batch", 1, 64)), S = hfx_dim_sym(hfx_graph_symbol(g, "seq", 1, 64));
    static const float w4[4] = {1, 2, 3, 4}, w44[16] = {0}, b4[4] = {0};
    hfx_value *x = input(g, "x", HFX_DTYPE_F32, 3, (hfx_dim[]){B, S, hfx_dim_const(4)});
    hfx_value *w = hfx_const_bytes(g, HFX_DTYPE_F32, 1, (int64_t[]){4}, w4);
    hfx_value *h = hfx_rms_norm(g, x, w, 1e-6, 0);
    h = hfx_rms_norm(g, h, w, 1e-6, 1.0);
    h = hfx_linear(g, h, hfx_const_bytes(g, HFX_DTYPE_F32, 2, (int64_t[]){4, 4}, w44),
                   hfx_const_bytes(g, HFX_DTYPE_F32, 1, (int64_t[]){4}, b4));
    /* q: 2 heads of 2, k/v: 1 head of 2 → [B,S,H,D] → [B,H,S,D] */
    hfx_value *q = hfx_transpose(g, hfx_reshape(g, h, 4, (hfx_dim[]){B, S, hfx_dim_const(2), hfx_dim_const(2)}), 4,
                                 (int64_t[]){0, 2, 1, 3});
    hfx_value *k = hfx_slice(g, q, 1, 0, 1);
    hfx_value *bias = input(g, "bias", HFX_DTYPE_F32, 4, (hfx_dim[]){B, hfx_dim_const(1), S, S});
    hfx_value *a = hfx_attention(g, q, k, k, bias, 0.5, 30.0, 0);
    hfx_value *flat = hfx_reshape(g, hfx_transpose(g, a, 4, (int64_t[]){0, 2, 1, 3}), 3, (hfx_dim[]){B, S, hfx_dim_const(4)});
    hfx_value *m = hfx_top_k_mask(g, flat, 2);
    /* [B,S,4] → [S,B,4]: both symbols move, so the target shape is built at run time */
    hfx_value *moved = hfx_reshape(g, m, 3, (hfx_dim[]){S, B, hfx_dim_const(4)});
    hfx_graph_output(g, moved, "y");
    return g;
}

/* With nothing kept, no high-level op is left, the graph verifies, and the output is the very
 * value it was (produced now by the last node of its expansion). */
static void test_decompose_everything(void **state) {
    (void)state;
    hfx_graph *g = high_level_graph();
    hfx_error err;
    assert_int_equal(hfx_graph_verify(g, &err), HFX_OK);
    hfx_value *y = g->outputs[0];
    assert_int_equal(hfx_decompose(g, NULL, &err), HFX_OK);
    assert_int_equal(hfx_graph_verify(g, &err), HFX_OK);
    assert_int_equal(count_op(g, HFX_OP_RMS_NORM), 0);
    assert_int_equal(count_op(g, HFX_OP_ATTENTION), 0);
    assert_int_equal(count_op(g, HFX_OP_LINEAR), 0);
    assert_int_equal(count_op(g, HFX_OP_TOP_K_MASK), 0);
    assert_int_equal(count_op(g, HFX_OP_TOP_K), 1);
    assert_int_equal(count_op(g, HFX_OP_SCATTER_ELEMENTS), 1);
    assert_int_equal(count_op(g, HFX_OP_POW), 2); /* RMSNorm in the form ONNX Runtime fuses */
    assert_int_equal(count_op(g, HFX_OP_TANH), 1); /* the soft-cap */
    assert_ptr_equal(g->outputs[0], y);
    assert_int_equal(y->producer->op, HFX_OP_RESHAPE);
    assert_int_equal(y->producer->n_in, 2); /* the run-time shape */
    for (int i = 0; i < g->n_nodes; i++) assert_int_equal(g->nodes[i]->id, i);
    hfx_graph_free(g);
}

static bool keep_all(const hfx_graph *g, const hfx_node *n) {
    (void)g;
    (void)n;
    return true;
}

/* What a backend keeps stays, except a linear's bias, which always becomes an Add. */
static void test_decompose_keeps(void **state) {
    (void)state;
    hfx_graph *g = high_level_graph();
    hfx_error err;
    assert_int_equal(hfx_decompose(g, keep_all, &err), HFX_OK);
    assert_int_equal(hfx_graph_verify(g, &err), HFX_OK);
    assert_int_equal(count_op(g, HFX_OP_RMS_NORM), 2);
    assert_int_equal(count_op(g, HFX_OP_ATTENTION), 1);
    assert_int_equal(count_op(g, HFX_OP_TOP_K_MASK), 1);
    assert_int_equal(count_op(g, HFX_OP_LINEAR), 1);
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == HFX_OP_LINEAR) assert_int_equal(g->nodes[i]->n_in, 2);
    hfx_graph_free(g);
}

/* The registry: names and option tables. */
static void test_format_registry(void **state) {
    (void)state;
    char names[256];
    assert_string_equal(hfx_format_names(false, names, sizeof names), "onnx, openvino, executorch, dynamo");
    assert_string_equal(hfx_format_names(true, names, sizeof names), "onnx, openvino, executorch, dynamo");
    const hfx_format *onnx = hfx_format_find("onnx");
    assert_non_null(onnx);
    assert_non_null(onnx->write);
    assert_int_equal(hfx_format_option_index(onnx, "opset_version"), 0);
    assert_int_equal(hfx_format_option_index(onnx, "stateful"), -1);
    assert_non_null(hfx_format_find("executorch")->write);
    assert_null(hfx_format_find("tflite"));
    for (int i = 0; hfx_format_at(i); i++) {
        const hfx_format *f = hfx_format_at(i);
        assert_true(f->n_options <= HFX_FORMAT_MAX_OPTIONS);
        if (f->write) assert_non_null(f->graph_ext);
        if (f->state_option) assert_true(hfx_format_option_index(f, f->state_option) >= 0);
    }
    assert_string_equal(hfx_format_name(1), "openvino");
    assert_string_equal(hfx_format_name(2), "executorch");
    assert_string_equal(hfx_format_name(3), "dynamo");
    assert_null(hfx_format_name(4));
    assert_string_equal(hfx_format_of_file("out/decode.xml"), "openvino");
    assert_string_equal(hfx_format_of_file("out/model.pt2"), "dynamo");
    assert_string_equal(hfx_format_of_file("out/model.pte"), "executorch");
    assert_null(hfx_format_of_file("weights.bin"));
}

/* The table of export options: every key and every flag once, a flag's option helped, the
 * settings read from a config as the rows say (defaults where unset). */
static void test_export_options(void **state) {
    (void)state;
    hfx_option_info a, b;
    int n = 0;
    while (hfx_option_info_at(n, &a)) n++;
    assert_true(n > HFX_KEY_COUNT);
    assert_int_equal(hfx_option_info_at(n, &a), 0);
    for (int i = 0; i < n; i++) {
        hfx_option_info_at(i, &a);
        assert_non_null(a.key);
        assert_non_null(a.type);
        if (a.flag || a.flag_off) assert_non_null(a.help);
        if (a.flag_off) assert_string_equal(a.type, "bool");
        if (strcmp(a.type, "choice") == 0) assert_non_null(a.choices);
        for (int j = 0; j < i; j++) {
            hfx_option_info_at(j, &b);
            /* a format's key is never a common one; formats may share a name, never a flag */
            if (!a.format || !b.format || strcmp(a.format, b.format) == 0) assert_string_not_equal(a.key, b.key);
            if (a.flag && b.flag) assert_string_not_equal(a.flag, b.flag);
            if (a.flag_off && b.flag_off) assert_string_not_equal(a.flag_off, b.flag_off);
        }
    }
    hfx_export_config *c = NULL;
    assert_int_equal(hfx_export_config_from_json("{\"export_format\": \"onnx\", \"max_cache_len\": 64, "
                                                 "\"dtype\": \"bf16\", \"opset_version\": 21, \"io\": \"seed\"}",
                                                 &c, NULL),
                     HFX_OK);
    const hfx_settings *s = hfx_export_config_settings(c, "decode");
    assert_ptr_equal(s->format, hfx_format_find("onnx"));
    assert_int_equal(s->max_cache_len, 64);
    assert_int_equal(s->dtype, HFX_DTYPE_BF16);
    assert_true(s->io_seed);
    assert_int_equal(s->logits_to_keep, -1);
    assert_int_equal(s->opt[hfx_format_option_index(s->format, "opset_version")], 21);
    assert_int_equal(s->opt[hfx_format_option_index(s->format, "external_data")], 1);
    assert_int_equal(hfx_export_config_set(c, "max_cache_len", "null", NULL), HFX_OK);
    assert_int_equal(hfx_export_config_settings(c, NULL)->max_cache_len, 0);
    assert_int_equal(hfx_export_config_set(c, "max_cache_len", "0", NULL), HFX_ERR_INVALID);
    hfx_export_config_free(c);
    assert_int_equal(hfx_export_config_from_json("{\"prefill\": {\"export_format\": \"openvino\"}, "
                                                 "\"decode\": {\"export_format\": \"openvino\", \"stateful\": false}}",
                                                 &c, NULL),
                     HFX_OK);
    int k = hfx_format_option_index(hfx_format_find("openvino"), "stateful");
    assert_int_equal(hfx_export_config_settings(c, "prefill")->opt[k], 1);
    assert_int_equal(hfx_export_config_settings(c, "decode")->opt[k], 0);
    assert_null(hfx_export_config_settings(c, "encoder"));
    hfx_export_config_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_options),
        cmocka_unit_test(test_dtype_bits),
        cmocka_unit_test(test_top_k_two_outputs),
        cmocka_unit_test(test_state),
        cmocka_unit_test(test_decompose_everything),
        cmocka_unit_test(test_decompose_keeps),
        cmocka_unit_test(test_format_registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
