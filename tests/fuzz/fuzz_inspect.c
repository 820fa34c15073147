/* libFuzzer entry: `hfx inspect`'s readers (tools/inspect.c, tools/inspect_pte.c) over arbitrary
 * bytes, as an .onnx file (the protobuf reader), an OpenVINO .xml or an ExecuTorch .pte (the
 * flatbuffer walk), chosen by the first byte. They must print or refuse, never crash or read out
 * of bounds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/inspect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[3][128];
    if (!path[0][0]) {
        snprintf(path[0], sizeof path[0], "/tmp/hfx-fuzz-inspect-%d.onnx", (int)getpid());
        snprintf(path[1], sizeof path[1], "/tmp/hfx-fuzz-inspect-%d.xml", (int)getpid());
        snprintf(path[2], sizeof path[2], "/tmp/hfx-fuzz-inspect-%d.pte", (int)getpid());
    }
    if (size < 1) return 0;
    int kind = data[0] % 3; /* 0 onnx, 1 xml, 2 pte */
    FILE *f = fopen(path[kind], "wb");
    if (!f) abort();
    if (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1) abort();
    fclose(f);
    FILE *null = fopen("/dev/null", "w");
    if (!null) abort();
    hfx_error err;
    if (kind == 2) inspect_pte(path[2], null, &err);
    else if (kind == 1) inspect_openvino(path[1], null, &err);
    else inspect_onnx(path[0], null, &err);
    fclose(null);
    return 0;
}
