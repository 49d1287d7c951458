from pto_wsp import workload, P, kernel, In, Out, Tensor, DenseDyn
from pto_wsp import Channel, send, consume, connect, process
from pto_wsp import DispatchPolicy

# Define kernels
@kernel
def load(input: In[Tensor], buf: Out[Tensor]): ...

@kernel
def compute(buf: In[Tensor], result: Out[Tensor]): ...

@kernel
def store(result: In[Tensor], output: Out[Tensor]): ...

# Channels (depth=2 for double buffering)
l2c = Channel("load_to_compute", depth=2)
c2s = Channel("compute_to_store", depth=2)

# Define pipeline workload using P.pipe() and CSP
@workload
def pipeline(num_tiles):
    tiles = DenseDyn(num_tiles)

    # Loader process (sequential tile loading)
    with P.pipe():
        for i in P.seq(tiles):
            send(l2c, load[i](input=input[i], buf=tile_buf))

    # Computer process (consumes from load, produces to store)
    with consume(l2c) as t:
        send(c2s, compute[t](buf=tile_buf, result=result_buf))

    # Storer process (consumes from compute)
    with consume(c2s) as r:
        store[r](result=result_buf, output=output)

# Schedule (combinator style)
program = (pipeline(num_tiles)
    .dispatch(DispatchPolicy.round_robin(1))    # Single AICPU
    .compile())

program.execute()
program.synchronize()
