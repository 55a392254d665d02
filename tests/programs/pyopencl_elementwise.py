"""pyopencl's elementwise kernels on an out-of-order queue (issue #56): two kernels read one
array and write two others, with no order between them. Correct code: both only read `x`.
pyopencl's generated kernels reach every array through a local pointer made from the argument
(`x = (__global T *)((__global char *) x__base + x__offset)`), which clxfer must follow to know
that. With PYOPENCL_NO_CACHE=1 it builds from source; otherwise its binary cache may hand the
driver a binary, and clxfer has no source."""
import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pyopencl.elementwise import ElementwiseKernel

platform = next(p for p in cl.get_platforms() if "Portable Computing Language" in p.name)
ctx = cl.Context(platform.get_devices()[:1])
q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
a = np.arange(1 << 16, dtype=np.float32)
x = cla.to_device(q, a)
q.finish()
y = cla.empty_like(x)
z = cla.empty_like(x)
twice = ElementwiseKernel(ctx, "float *x, float *y", "y[i] = x[i] * 2", "twice")
plus = ElementwiseKernel(ctx, "float *x, float *z", "z[i] = x[i] + 1", "plus")
twice(x, y, queue=q)
plus(x, z, queue=q)
q.finish()
print("results right:", bool((y.get() == a * 2).all() and (z.get() == a + 1).all()))
