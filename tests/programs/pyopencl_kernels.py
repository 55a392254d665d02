"""pyopencl: three kernels, then a blocking read of what they wrote (issue #24: the read's time is
mostly its wait for the first kernel). Prints a digest of the result."""
import hashlib

import numpy as np
import pyopencl as cl

platform = next(p for p in cl.get_platforms() if "Portable Computing Language" in p.name)
ctx = cl.Context(platform.get_devices()[:1])
queue = cl.CommandQueue(ctx)
src = """
__kernel void spin(__global float *x, int rounds) {
  int i = get_global_id(0); float v = x[i];
  for (int r = 0; r < rounds; r++) v = v * 0.999f + 0.5f;
  x[i] = v;
}
__kernel void scale(__global float *x) { x[get_global_id(0)] *= 2.0f; }
"""
prog = cl.Program(ctx, src).build()
host = np.arange(1 << 16, dtype=np.float32)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
prog.spin(queue, host.shape, None, buf, np.int32(3000))
prog.scale(queue, host.shape, None, buf)
prog.scale(queue, host.shape, None, buf)
back = np.empty_like(host)
cl.enqueue_copy(queue, back, buf)  # blocking
print("sha256:", hashlib.sha256(back.tobytes()).hexdigest())
