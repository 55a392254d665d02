"""pyopencl writes, reads and maps a buffer; prints what came back (compared with and without clxfer)."""
import hashlib

import numpy as np
import pyopencl as cl

platform = next(p for p in cl.get_platforms() if "Portable Computing Language" in p.name)
ctx = cl.Context(platform.get_devices())
queue = cl.CommandQueue(ctx)
host = np.arange(1 << 16, dtype=np.float32)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, host.nbytes)
cl.enqueue_copy(queue, buf, host)
back = np.empty_like(host)
cl.enqueue_copy(queue, back, buf)
mapped, _ = cl.enqueue_map_buffer(queue, buf, cl.map_flags.READ | cl.map_flags.WRITE, 0, host.shape, host.dtype)
mapped[:16] *= 2
del mapped
queue.finish()
again = np.empty_like(host)
cl.enqueue_copy(queue, again, buf)
queue.finish()
print("read back equal:", bool((back == host).all()))
print("after map:", again[:4].tolist(), again[-1])
print("sha256:", hashlib.sha256(again.tobytes()).hexdigest())
