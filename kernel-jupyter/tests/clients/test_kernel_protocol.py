"""jupyter_kernel_test's protocol suite against `wsp jupyter kernel`: every message is validated
against the Jupyter messaging schema (v5), and each sample below is run as the suite says.

jupyter_kernel_test sends no `cellId`, so each execution is a new cell appended to the
notebook's program; the samples therefore define no name twice. The class set-up runs the cell
that defines the program the samples use.
"""

import unittest

import jupyter_kernel_test

from kernel_client import execute

SETUP = '''
from pto_wsp import *

F32 = DType.F32
ROWS = 16
HIDDEN = 128
tiles = Dense[8]

X = Tensor((8, ROWS, HIDDEN), F32, init=randn(seed=0))
Y = Tensor((8, ROWS, HIDDEN), F32)


@kernel
def rmsnorm_tile(x: In[Tile[ROWS, HIDDEN, F32]], out: Out[Tile[ROWS, HIDDEN, F32]],
                 eps: Scalar[F32] = 1e-6):
    inv = pto.rsqrt(pto.add(pto.rowmean(pto.mul(x, x)), eps))
    pto.store(out, pto.rowmul(x, inv))


@workload
def rmsnorm(tiles):
    for t in P(tiles):
        rmsnorm_tile[t](x=X[t], out=Y[t])


program = rmsnorm(tiles).compile(target="cpu_sim")
'''


class WspKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "wsp"
    language_name = "wsp"
    file_extension = ".wsp"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        run = execute(cls.kc, SETUP)
        if run.status != "ok":
            raise AssertionError(f"the set-up cell failed:\n{run.describe()}")

    code_hello_world = 'print("hello, world")'

    # A deprecated spelling (`tl.*`) is a warning, which goes to stderr; the cell still runs.
    code_stderr = '''
@kernel
def twice(x: In[Tile[ROWS, HIDDEN, F32]], y: Out[Tile[ROWS, HIDDEN, F32]]):
    pto.store(y, tl.add(x, x))
'''

    # Jupyter's convention: the matches replace the name being typed (after the dot).
    completion_samples = [
        {"text": "pto.row", "matches": {"rowsum", "rowmax", "rowmean", "rowmul", "rowadd"}},
        {"text": "pto.rsq", "matches": {"rsqrt"}},
        {"text": "DispatchPolicy.round", "matches": {"round_robin"}},
        {"text": "print(rmsnorm_t", "matches": {"rmsnorm_tile"}},
    ]

    # The cursor on an op inside a kernel being written.
    code_inspect_sample = """
@kernel
def inverse_root(x: In[Tile[ROWS, HIDDEN, F32]], y: Out[Tile[ROWS, HIDDEN, F32]]):
    pto.store(y, pto.rsqrt"""

    complete_code_samples = [
        'print("hi")',
        "Z = Tensor((4, 8), F32)",
        "%trace off",
        "@kernel\ndef k(x: In[Tile[4, 4, F32]]):\n    pass\n",
    ]
    incomplete_code_samples = [
        "Z = Tensor((4,",
        "@kernel\ndef k(x: In[Tile[4, 4, F32]]):",
        "for t in P(tiles):",
        'program.execute(\n    seq=16',
    ]
    invalid_code_samples = [
        "Z = )",
        "x = 1 +* 2",
    ]

    # A tile shape mismatch (WSP201): the reply is an error and the only output is the error.
    code_generate_error = '''
@kernel
def add_bias(x: In[Tile[16, 128, F32]], b: In[Tile[16, 64, F32]], y: Out[Tile[16, 128, F32]]):
    pto.store(y, pto.add(x, b))
'''

    code_execute_result = [
        {"code": "Y", "mime": "text/plain"},
        {"code": "Y", "mime": "text/html"},
        {"code": "X", "mime": "image/png"},
    ]

    # The inputs of this session, as IPython keeps them, searched by glob as IPython does. The
    # suite's search leaves out `unique` and `n`, which jupyter-protocol requires: the kernel
    # reads such a request itself, with IPython's defaults.
    supported_history_operations = ("tail", "range", "search")
    code_history_pattern = "Y"

    # The stats table. (With tracing on, the timeline is a second display_data without
    # text/html; the suite wants every display_data of the cell to have the sample's type, so
    # the timeline is checked by the notebook tests instead.)
    code_display_data = [
        {"code": "program.execute()", "mime": "text/plain"},
        {"code": "program.execute()", "mime": "text/html"},
    ]


if __name__ == "__main__":
    unittest.main()
