"""examples/ported/layernorm.wsp: NumPy's layer norm over the last dimension."""
import numpy as np

from ported_common import Golden

g = Golden()
x, gain, bias = g["X"], g["Gain"], g["Bias"]
mean = x.mean(axis=-1, keepdims=True)
var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
g.check("Y", (x - mean) / np.sqrt(var + 1e-5) * gain + bias)
g.done()
