// Greedy generation in C++ with an hfx ExecuTorch export: the static-cache multi-token decode
// (`hfx export MODEL OUT --format executorch --for-generation --cache static --max-cache-len M
// --multi-token-decode --batch-size 1`, the sequence bounded in dynamic_shapes), run by the
// ExecuTorch runtime from the executorch wheel (its headers and libraries, see CMakeLists.txt).
//
//   generate_executorch OUT/decode.pte --input-ids 1,2,3 [--max-new-tokens N] [--dump-cache FILE]
//
// Prints the new token ids as one JSON list, as examples/generate_onnx.py does for one prompt.
// The cache is the caller's: one zeroed buffer per cache input, passed to every call. Exported
// with "alloc_graph_input": false the program plans no memory for its inputs, so set_input shares
// the caller's buffers and the program writes each step's keys and values into them in place
// (aten::index_put_ at cache_position): nothing is copied between steps. Exported with planned
// inputs (the default), set_input copies the buffers in, so the loop copies the returned cache
// (outputs 1..) back after each call. --dump-cache writes the first cache input's buffer (layer
// 0's keys, float32) after the run, to check where it landed.
//
// Inputs, in the order export.json lists them (docs/GENERATION.md, static cache): input_ids
// [1, S], attention_mask [1, M] (1 for the slots holding a token, this step's included),
// position_ids [1, S], cache_position [S], then the cache tensors; output 0 is the logits.
//
// The Python system's profile (`--io seed`, as transformers.exporters' ExecutorchExporter writes a
// StaticCache decode, and its docs' C++ loop runs it) is told by input 1, a bool mask: inputs
// input_ids [1, S], attention_mask [1, 1, S, M] (query k sees the slots up to its position),
// position_ids [1, S], then the cache (each layer's keys, values and write counter); outputs the
// cache's new content (the input mutations), the logits, then the cache as the model returns it.
// As the docs' loop does, the returned cache's outputs are bound to the caller's buffers
// (set_output_data_ptr): the program writes each step's cache there, nothing copied.
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using executorch::aten::ScalarType;
using executorch::extension::FileDataLoader;
using executorch::extension::make_tensor_ptr;
using executorch::extension::TensorPtr;
using namespace executorch::runtime;

namespace {

int usage(const char *why) {
    std::fprintf(stderr, "generate_executorch: %s\nusage: generate_executorch DECODE.pte --input-ids 1,2,3 "
                         "[--max-new-tokens N] [--dump-cache FILE]\n", why);
    return 2;
}

bool parse_ids(const char *text, std::vector<int64_t> *ids) {
    for (const char *p = text; *p;) {
        char *end;
        long long v = std::strtoll(p, &end, 10);
        if (end == p) return false;
        ids->push_back(v);
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return false;
    }
    return !ids->empty();
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) return usage("no program");
    const char *pte = argv[1], *dump = nullptr;
    std::vector<int64_t> prompt;
    long max_new = 16;
    for (int i = 2; i < argc; i++) {
        std::string a = argv[i];
        if (i + 1 >= argc) return usage(("no value for " + a).c_str());
        if (a == "--input-ids") {
            if (!parse_ids(argv[++i], &prompt)) return usage("--input-ids must be comma-separated integers");
        } else if (a == "--max-new-tokens") {
            max_new = std::strtol(argv[++i], nullptr, 10);
        } else if (a == "--dump-cache") {
            dump = argv[++i];
        } else {
            return usage(("unknown option " + a).c_str());
        }
    }
    if (prompt.empty() || max_new < 1) return usage("a prompt and at least one new token are needed");

    runtime_init();
    auto loader = FileDataLoader::from(pte);
    if (!loader.ok()) return std::fprintf(stderr, "generate_executorch: cannot open %s\n", pte), 1;
    auto program = Program::load(&loader.get());
    if (!program.ok()) return std::fprintf(stderr, "generate_executorch: %s is not a program\n", pte), 1;
    auto meta = program->method_meta("forward");
    if (!meta.ok()) return std::fprintf(stderr, "generate_executorch: %s has no forward method\n", pte), 1;

    // the method's memory: an arena for its bookkeeping, and each buffer its memory plan asks for
    std::vector<uint8_t> arena(8 << 20);
    MemoryAllocator method_allocator(arena.size(), arena.data());
    std::vector<std::vector<uint8_t>> planned(meta->num_memory_planned_buffers());
    std::vector<Span<uint8_t>> spans;
    for (size_t i = 0; i < planned.size(); i++) {
        planned[i].resize(meta->memory_planned_buffer_size(i).get());
        spans.push_back({planned[i].data(), planned[i].size()});
    }
    HierarchicalAllocator planned_allocator({spans.data(), spans.size()});
    MemoryManager memory(&method_allocator, &planned_allocator);
    auto method = program->load_method("forward", &memory);
    if (!method.ok()) return std::fprintf(stderr, "generate_executorch: cannot load forward (0x%x)\n",
                                          (unsigned)method.error()), 1;

    // the caller's cache: one zeroed buffer per cache input, at the sizes and dtypes the program gives
    const size_t n_inputs = meta->num_inputs();
    if (n_inputs < 4) return std::fprintf(stderr, "generate_executorch: not a static-cache decode\n"), 1;
    const bool seed = meta->input_tensor_meta(1)->scalar_type() == ScalarType::Bool;  // (the Python system's profile)
    const size_t first_cache = seed ? 3 : 4, n_cache = n_inputs - first_cache;
    const int64_t M = meta->input_tensor_meta(1)->sizes()[seed ? 3 : 1];
    std::vector<std::vector<uint8_t>> cache(n_cache);
    std::vector<TensorPtr> cache_tensors;
    bool copy_back = false;
    for (size_t i = 0; i < cache.size(); i++) {
        auto info = meta->input_tensor_meta(first_cache + i).get();
        copy_back |= info.is_memory_planned() && !seed;
        cache[i].assign(info.nbytes(), 0);
        std::vector<executorch::aten::SizesType> sizes(info.sizes().begin(), info.sizes().end());
        cache_tensors.push_back(make_tensor_ptr(sizes, cache[i].data(), info.scalar_type()));
    }
    if (seed && meta->num_outputs() != 2 * n_cache + 1)
        return std::fprintf(stderr, "generate_executorch: %zu outputs, not the cache twice and the logits\n",
                            meta->num_outputs()), 1;
    const size_t logits_at = seed ? n_cache : 0;
    // an output the program does not plan (exported with "alloc_graph_output": false) is written where the caller says
    std::vector<uint8_t> logits_buffer;
    if (!meta->output_tensor_meta(logits_at)->is_memory_planned())
        logits_buffer.resize(meta->output_tensor_meta(logits_at)->nbytes());
    if ((int64_t)prompt.size() + max_new > M + 1)
        return std::fprintf(stderr, "generate_executorch: %zu + %ld tokens do not fit max_cache_len %lld\n",
                            prompt.size(), max_new, (long long)M), 2;

    std::vector<int64_t> slots(M, 0);  // the attention mask: which slots hold a token
    int64_t used = 0;
    // one call on `tokens` at the next free slots; the greedy pick at its last position
    auto step = [&](const std::vector<int64_t> &tokens, int64_t *next) -> bool {
        auto s = (executorch::aten::SizesType)tokens.size();
        std::vector<int64_t> ids(tokens), positions(tokens.size());
        for (size_t k = 0; k < tokens.size(); k++) positions[k] = used + (int64_t)k, slots[used + k] = 1;
        std::vector<int64_t> cache_position(positions);
        // the seed's mask: query k (at position used + k) sees the slots up to its own
        std::unique_ptr<bool[]> sees(seed ? new bool[tokens.size() * M] : nullptr);
        for (size_t k = 0; seed && k < tokens.size(); k++)
            for (int64_t t = 0; t < M; t++) sees[k * M + t] = t <= used + (int64_t)k;
        auto t_ids = make_tensor_ptr({1, s}, ids.data(), ScalarType::Long);
        auto t_mask = seed ? make_tensor_ptr({1, 1, s, (executorch::aten::SizesType)M}, sees.get(), ScalarType::Bool)
                           : make_tensor_ptr({1, (executorch::aten::SizesType)M}, slots.data(), ScalarType::Long);
        auto t_pos = make_tensor_ptr({1, s}, positions.data(), ScalarType::Long);
        auto t_slot = make_tensor_ptr({s}, cache_position.data(), ScalarType::Long);
        Error e = method->set_input(EValue(*t_ids), 0);
        if (e == Error::Ok) e = method->set_input(EValue(*t_mask), 1);
        if (e == Error::Ok) e = method->set_input(EValue(*t_pos), 2);
        if (e == Error::Ok && !seed) e = method->set_input(EValue(*t_slot), 3);
        for (size_t i = 0; e == Error::Ok && i < cache_tensors.size(); i++)
            e = method->set_input(EValue(*cache_tensors[i]), first_cache + i);
        for (size_t i = 0; e == Error::Ok && seed && i < cache.size(); i++)  // the returned cache: the caller's
            e = method->set_output_data_ptr(cache[i].data(), cache[i].size(), n_cache + 1 + i);
        if (e == Error::Ok && !logits_buffer.empty())
            e = method->set_output_data_ptr(logits_buffer.data(), logits_buffer.size(), logits_at);
        if (e == Error::Ok) e = method->execute();
        if (e != Error::Ok) return std::fprintf(stderr, "generate_executorch: the call failed (0x%x)\n", (unsigned)e), false;
        used += (int64_t)tokens.size();
        for (size_t i = 0; copy_back && i < cache.size(); i++) {  // the program wrote its own copy
            const auto &t = method->get_output(1 + i).toTensor();
            std::memcpy(cache[i].data(), t.const_data_ptr(), cache[i].size());
        }
        const auto &logits = method->get_output(logits_at).toTensor();  // [1, S or 1, vocab]
        const int64_t vocab = logits.size(logits.dim() - 1), last = logits.size(logits.dim() - 2) - 1;
        const float *row = logits.const_data_ptr<float>() + last * vocab;
        int64_t best = 0;
        for (int64_t v = 1; v < vocab; v++)
            if (row[v] > row[best]) best = v;
        *next = best;
        return true;
    };

    std::vector<int64_t> out;
    int64_t next;
    if (!step(prompt, &next)) return 1;
    out.push_back(next);
    while ((long)out.size() < max_new) {
        if (!step({next}, &next)) return 1;
        out.push_back(next);
    }
    std::printf("[");
    for (size_t i = 0; i < out.size(); i++) std::printf("%s%lld", i ? ", " : "", (long long)out[i]);
    std::printf("]\n");
    if (dump) {
        FILE *f = std::fopen(dump, "wb");
        if (!f || std::fwrite(cache[0].data(), 1, cache[0].size(), f) != cache[0].size() || std::fclose(f))
            return std::fprintf(stderr, "generate_executorch: cannot write %s\n", dump), 1;
    }
    return 0;
}
