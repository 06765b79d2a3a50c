#!/usr/bin/env python3
# Writes and compiles the shader variants that loads.cpp times (README.md): each
# invocation runs L steps of 64 multiply-adds into 16 vec4 accumulators, its
# operands (two vec4 "a", two vec4 "b" per step) fetched a different way.
import subprocess

HEAD = """#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B0 { vec4 x[]; };
layout(std430, binding = 1) buffer B1 { vec4 w[]; };
layout(binding = 2) uniform samplerBuffer t1;  // the buffer as R32_SFLOAT texels
layout(binding = 3) uniform samplerBuffer t4;  // the buffer as R32G32B32A32_SFLOAT texels
layout(push_constant) uniform PC { uint L; } pc;
shared vec4 xs[1024];
shared vec4 ws[1024];
"""
BODY = """
void main() {
  const uint lx = gl_LocalInvocationID.x, g = gl_WorkGroupID.x;
  vec4 acc[16];
  [[unroll]] for (uint i = 0; i < 16; ++i) acc[i] = vec4(0);
  PRE
  for (uint k = 0; k < pc.L; ++k) {
    vec4 a[2], b[2];
    FETCH
    [[unroll]] for (uint j = 0; j < 8; ++j)
      [[unroll]] for (uint q = 0; q < 2; ++q) acc[j * 2 + q] += a[q] * b[j / 4][j % 4];
  }
  vec4 s = vec4(0);
  [[unroll]] for (uint i = 0; i < 16; ++i) s += acc[i];
  x[g * 64 + lx] = s;
}
"""
STAGE = "xs[lx] = x[lx]; ws[lx] = w[lx]; barrier();"
TEX = "int base = int(g * 4096 + k * 64);"
VARIANTS = {
    # no loads: b derived from a
    "fma": ("", "a[0] = vec4(float(k)); a[1] = a[0] + 1.0; b[0] = a[0] * 0.5; b[1] = a[1] * 0.25;"),
    # 4 shared-memory vec4 loads per step (conv.comp's inner loop)
    "shared": (STAGE, "a[0] = xs[(k * 32 + lx) % 1024]; a[1] = xs[(k * 32 + lx + 16) % 1024];"
               " b[0] = ws[(k * 16 + lx / 8) % 1024]; b[1] = ws[(k * 16 + lx / 8 + 8) % 1024];"),
    # the same with b at an address uniform over the work group
    "shared_buni": (STAGE, "a[0] = xs[(k * 32 + lx) % 1024]; a[1] = xs[(k * 32 + lx + 16) % 1024];"
                    " b[0] = ws[(k * 2) % 1024]; b[1] = ws[(k * 2 + 1) % 1024];"),
    # 2 loads per step (a), b derived from a
    "shared_a": (STAGE, "a[0] = xs[(k * 32 + lx) % 1024]; a[1] = xs[(k * 32 + lx + 16) % 1024];"
                 " b[0] = a[0] * 0.5; b[1] = a[1] * 0.25;"),
    "ssbo_a": ("", "uint base = g * 4096 + k * 64; a[0] = x[base + lx]; a[1] = x[base + lx + 64];"
               " b[0] = a[0] * 0.5; b[1] = a[1] * 0.25;"),
    "tex4_a": ("", TEX + " a[0] = texelFetch(t4, base + int(lx)); a[1] = texelFetch(t4, base + int(lx) + 64);"
               " b[0] = a[0] * 0.5; b[1] = a[1] * 0.25;"),
    # 4 texel fetches per step (RGBA32F), and with b uniform
    "tex4": ("", TEX + " a[0] = texelFetch(t4, base + int(lx)); a[1] = texelFetch(t4, base + int(lx) + 64);"
             " b[0] = texelFetch(t4, base + int(lx) + 128); b[1] = texelFetch(t4, base + int(lx) + 192);"),
    "tex4_buni": ("", TEX + " a[0] = texelFetch(t4, base + int(lx)); a[1] = texelFetch(t4, base + int(lx) + 64);"
                  " b[0] = texelFetch(t4, int(k)); b[1] = texelFetch(t4, int(k) + 1);"),
    # 16 scalar texel fetches per step (R32F)
    "tex1": ("", "int base = int(g * 16384 + k * 256); [[unroll]] for (int e = 0; e < 4; ++e) {"
             " a[0][e] = texelFetch(t1, base + 4 * int(lx) + e).x; a[1][e] = texelFetch(t1, base + 4 * int(lx) + 256 + e).x;"
             " b[0][e] = texelFetch(t1, base + 4 * int(lx / 8) + 800000 + e).x;"
             " b[1][e] = texelFetch(t1, base + 4 * int(lx / 8) + 800032 + e).x; }"),
    # b by subgroup broadcast of a per-lane load
    "bcast": ("", "uint base = g * 4096 + k * 64; a[0] = x[base + lx]; a[1] = x[base + lx + 64];"
              " vec4 wl = w[base + gl_SubgroupInvocationID]; b[0] = subgroupBroadcast(wl, 0);"
              " b[1] = subgroupBroadcast(wl, 1);"),
}

if __name__ == "__main__":
    for name, (pre, fetch) in VARIANTS.items():
        with open(name + ".comp", "w") as f:
            f.write(HEAD + BODY.replace("PRE", pre).replace("FETCH", fetch))
        subprocess.run(["glslangValidator", "-V", "--target-env", "vulkan1.1", "-S", "comp", "-o", name + ".spv",
                        name + ".comp"], check=True, stdout=subprocess.DEVNULL)
    print(" ".join(VARIANTS))
