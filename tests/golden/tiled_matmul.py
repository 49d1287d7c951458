"""examples/tiled_matmul.wsp: C[m, n] = A[m] @ B[n], A in row panels and B in column panels."""
import numpy as np

from common import Golden

g = Golden()
A, B = g["A"], g["B"]
C = np.einsum("mik,nkj->mnij", A, B)
g.check("C", C)
g.done()
