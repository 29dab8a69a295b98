/* --device and --precision as the commands take them. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/engine.h"

int gs_device_parse(const char *device, const char *precision, gs_device *out) {
    gs_device d = {GS_DEVICE_CPU, 0, GS_PREC_AUTO};
    if (!device || !strcmp(device, "cpu")) {
        d.kind = GS_DEVICE_CPU;
    } else if (!strncmp(device, "cuda", 4) && (device[4] == 0 || device[4] == ':')) {
        d.kind = GS_DEVICE_CUDA;
        if (device[4] == ':') {
            char *end;
            long i = strtol(device + 5, &end, 10);
            if (!device[5] || *end || i < 0 || i > 255)
                return gs_fail("--device %s: expected cpu, cuda or cuda:N with N a device number", device);
            d.index = (int)i;
        }
    } else {
        return gs_fail("--device %s: expected cpu, cuda or cuda:N", device);
    }
    if (precision && strcmp(precision, "auto")) {
        if (!strcmp(precision, "f32")) d.precision = GS_PREC_F32;
        else if (!strcmp(precision, "tf32")) d.precision = GS_PREC_TF32;
        else if (!strcmp(precision, "bf16")) d.precision = GS_PREC_BF16;
        else return gs_fail("--precision %s: expected auto, f32, tf32 or bf16", precision);
        if (d.kind == GS_DEVICE_CPU && d.precision != GS_PREC_F32)
            return gs_fail("--precision %s needs --device cuda (the CPU engine computes in float32)", precision);
    }
    *out = d;
    return 0;
}
