/* libFuzzer entry: `hfx inspect`'s readers (tools/inspect.c) over arbitrary bytes, as an .onnx
 * file (the protobuf reader) or an OpenVINO .xml, chosen by the first byte. They must print or
 * refuse, never crash or read out of bounds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/inspect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[2][128];
    if (!path[0][0]) {
        snprintf(path[0], sizeof path[0], "/tmp/hfx-fuzz-inspect-%d.onnx", (int)getpid());
        snprintf(path[1], sizeof path[1], "/tmp/hfx-fuzz-inspect-%d.xml", (int)getpid());
    }
    if (size < 1) return 0;
    int xml = data[0] & 1;
    FILE *f = fopen(path[xml], "wb");
    if (!f) abort();
    if (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1) abort();
    fclose(f);
    FILE *null = fopen("/dev/null", "w");
    if (!null) abort();
    hfx_error err;
    if (xml) inspect_openvino(path[1], null, &err);
    else inspect_onnx(path[0], null, &err);
    fclose(null);
    return 0;
}
