"""A pyopencl program that hands a buffer from one queue to another (issue #25): a kernel on the
first device doubles it, the second device reads it. With "race", the read does not wait for the
kernel: exactly one possible data race. Otherwise it waits for the kernel's event."""
import sys

import numpy as np
import pyopencl as cl

race = len(sys.argv) > 1 and sys.argv[1] == "race"
platform = next(p for p in cl.get_platforms() if "Portable Computing Language" in p.name)
devices = platform.get_devices()
ctx = cl.Context(devices)
q1 = cl.CommandQueue(ctx, devices[0])
q2 = cl.CommandQueue(ctx, devices[-1])
prg = cl.Program(ctx, "__kernel void twice(__global float *b) { b[get_global_id(0)] *= 2; }")
prg.build(options=["-cl-kernel-arg-info"])
host = np.arange(1 << 16, dtype=np.float32)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
done = prg.twice(q1, host.shape, None, buf)
back = np.empty_like(host)
cl.enqueue_copy(q2, back, buf, wait_for=None if race else [done])
q2.finish()
q1.finish()
if not race:
    print("read back doubled:", bool((back == host * 2).all()))
