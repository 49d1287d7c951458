"""examples/megakernel_pipeline.wsp: load → compute (gelu(x * 0.5)) → store through two channels."""
from common import Golden, gelu

g = Golden()
src = g["Src"]
g.check("Staged", src)
g.check("Computed", gelu(src * 0.5))
g.check("Dst", gelu(src * 0.5))
g.done()
