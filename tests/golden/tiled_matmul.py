"""examples/tiled_matmul.wsp: C[m, n] = sum over k of A[m, k] @ B[k, n], tiles stored pre-tiled."""
import numpy as np

from common import Golden

g = Golden()
A, B = g["A"], g["B"]
C = np.einsum("mkij,knjl->mnil", A, B)
g.check("C", C)
g.done()
