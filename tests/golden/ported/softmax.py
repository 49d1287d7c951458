"""examples/ported/softmax.wsp: the original's golden, a row softmax of [B, S, V] logits."""
from ported_common import Golden, softmax_rows

g = Golden()
g.check("probs_base", softmax_rows(g["logits_base"]))
g.done()
